"""The Celery worker: deadlines and notification delivery."""
