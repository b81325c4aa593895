"""Replies by mail, named by the pipeline's stages: what a mail that asks adds (``mail``: the
words that work and the signed ``address``, with the ``terms`` it showed), how a reply is
screened (``screen``), read (``read``, ``words``), turned into a command (``choices``) and
applied (``apply``), and the answer it gets (``answer``, ``moves``); ``operator``: replies
pasted on the operator's outbox page. docs/mail-replies.md tells the whole way.
"""
