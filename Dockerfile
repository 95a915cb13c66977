# The assignment service (and the demo consumer) for docker-compose.yml.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY assignor ./assignor
COPY api ./api
COPY pipeline ./pipeline
COPY examples ./examples
RUN pip install --no-cache-dir '.[api,aiokafka,postgres]'
ENV ASSIGNOR_REGISTRY=/data/registry.sqlite3
VOLUME /data
EXPOSE 8000
# Inside the container the service must listen on all interfaces; compose publishes it on the
# host's loopback only.
CMD ["uvicorn", "--factory", "api.app:create_app", "--host", "0.0.0.0", "--port", "8000", "--timeout-graceful-shutdown", "5"]
