"""The HTTP adapter: a FastAPI app over the service layer (app/service.py, app/jobs.py)."""
