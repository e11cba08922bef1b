# syntax=docker/dockerfile:1
# Pressroom on Debian 12 (bookworm) with Node 20 and Debian's Chromium, as a non-root user.
# Not built in CI (the test machine has no Docker engine): it mirrors scripts/setup.sh and the
# environment the multi-process tests use. See docs/operations.md.
#
#   docker build -t pressroom .
#   docker run -p 8080:8080 -e PRESSROOM_ADMIN_TOKEN=… pressroom                 # embedded default
#   docker run … pressroom serve --role worker                                    # a worker process

FROM node:20-bookworm-slim AS build
# A compiler for better-sqlite3 when no prebuilt binary matches.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm_config_fund=false npm_config_audit=false
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY scripts ./scripts
COPY src ./src
COPY studio ./studio
# Compile the server and the studio, then keep only the runtime dependencies.
RUN npm run build && npm ci --omit=dev

FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      chromium \
      fonts-liberation2 fonts-dejavu-core fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji fonts-droid-fallback fonts-nanum \
      ghostscript qpdf poppler-utils util-linux \
      tini ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --create-home --home-dir /var/lib/pressroom pressroom
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/studio/dist ./studio/dist
ENV NODE_ENV=production \
    PORT=8080 \
    PRESSROOM_HOST=0.0.0.0 \
    PRESSROOM_DATA_DIR=/var/lib/pressroom \
    PRESSROOM_CHROMIUM_PATH=/usr/bin/chromium
USER pressroom
VOLUME ["/var/lib/pressroom"]
EXPOSE 8080
# Liveness only: /readyz (database, storage, browser) is for the load balancer, not for restarts.
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# tini reaps Chromium's helper processes and forwards SIGTERM for the graceful shutdown.
ENTRYPOINT ["tini", "--", "node", "bin/pressroom.js"]
CMD ["serve"]
