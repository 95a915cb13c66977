# The assignment service (and the demo consumer) for docker-compose.yml.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY assignor ./assignor
COPY api ./api
COPY pipeline ./pipeline
COPY examples ./examples
RUN pip install --no-cache-dir '.[api,aiokafka,postgres]'
# The service runs as an unprivileged user that owns only its registry's folder.
RUN useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin assignor \
    && mkdir -p /data && chown assignor /data
USER 10001
ENV ASSIGNOR_REGISTRY=/data/registry.sqlite3
VOLUME /data
EXPOSE 8000
# Inside the container the service must listen on all interfaces, so it starts only with
# ASSIGNOR_API_TOKEN set (`python -m api` refuses a non-loopback address without one); compose
# publishes it on the host's loopback only.
CMD ["python", "-m", "api", "--host", "0.0.0.0", "--port", "8000"]
