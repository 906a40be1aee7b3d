# tierwise service image. Not built in our CI (no Docker engine on the build machines): kept
# correct by reading; see README "Container image".
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    TIERWISE_HOST=0.0.0.0 \
    TIERWISE_PORT=8080 \
    TIERWISE_DATABASE_URL=sqlite:////var/lib/tierwise/tierwise.db \
    TIERWISE_SECRET_KEY_FILE=/var/lib/tierwise/tierwise.key

# Microsoft ODBC Driver 18 for SQL Server (pyodbc), per Microsoft's Debian 12 install steps;
# libxml2 for ibm_db's bundled IBM Data Server Driver (clidriver ships inside the ibm_db wheel).
RUN apt-get update \
 && apt-get install -y --no-install-recommends curl gnupg ca-certificates libxml2 unixodbc \
 && curl -fsSL https://packages.microsoft.com/keys/microsoft.asc \
      | gpg --dearmor -o /usr/share/keyrings/microsoft-prod.gpg \
 && curl -fsSL https://packages.microsoft.com/config/debian/12/prod.list \
      -o /etc/apt/sources.list.d/mssql-release.list \
 && apt-get update \
 && ACCEPT_EULA=Y apt-get install -y --no-install-recommends msodbcsql18 \
 && apt-get purge -y curl gnupg \
 && apt-get autoremove -y \
 && rm -rf /var/lib/apt/lists/*

RUN useradd --system --create-home --home-dir /var/lib/tierwise tierwise
WORKDIR /opt/tierwise
COPY pyproject.toml README.md ./
COPY app ./app
COPY advisors ./advisors
COPY connectors ./connectors
COPY migrations ./migrations
COPY policies ./policies
RUN pip install .

USER tierwise
VOLUME ["/var/lib/tierwise"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s CMD python -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:8080/api/health', timeout=4)" || exit 1
CMD ["tierwise", "serve"]
