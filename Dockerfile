# Builds the server and runs it on a slim Debian image.
FROM swift:6.2-bookworm AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends libpq-dev libssl-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product mockstock --static-swift-stdlib

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends libpq5 libssl3 ca-certificates tzdata libjs-chart.js \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --home-dir /app mockstock
COPY --from=build /src/.build/release/mockstock /usr/local/bin/mockstock
WORKDIR /app
COPY sql ./sql
COPY openapi.yaml ./
COPY Public ./Public
ENV HOST=0.0.0.0 PORT=8080 RESOURCE_DIR=/app
USER mockstock
EXPOSE 8080
ENTRYPOINT ["mockstock"]
CMD ["serve"]
