# The neorag chat (Streamlit) for docker-compose.yml. Dependencies come from the same
# requirements.lock `make install` uses, so the container runs the tested versions; the
# embedding and NER models ship inside those packages, so nothing downloads at run time.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    NEORAG_DATA_DIR=/data

WORKDIR /app

# Dependencies first: this layer is reused until requirements.lock changes.
COPY requirements.lock ./
RUN pip install -r requirements.lock

COPY pyproject.toml README.md ./
COPY app ./app
COPY graph ./graph
COPY ingest ./ingest
COPY cypher ./cypher
RUN pip install --no-deps .

COPY streamlit_app.py ./
COPY sample_corpus ./sample_corpus

RUN useradd --create-home --uid 10001 neorag && mkdir -p /data && chown neorag /data
USER neorag

EXPOSE 8501 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"
CMD ["streamlit", "run", "streamlit_app.py", "--server.address", "0.0.0.0", "--server.port", "8501", \
     "--server.headless", "true", "--browser.gatherUsageStats", "false"]
