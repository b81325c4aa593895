"""The Celery worker (issue 4): deadlines and notification delivery."""
