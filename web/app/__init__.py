"""What every request and process has: ``logs`` (one logging setup, secrets kept out), ``security``
(headers, HTTPS behind a proxy, the session), ``inputs`` (input checked at the edge), ``limits``
(abuse limits), ``queue`` (work sent to the worker by task name), ``health`` and ``metrics``
(what the operator watches) and ``doctor`` (what is stuck across games).
"""
