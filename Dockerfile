# syntax=docker/dockerfile:1
# Multi-stage: production dependencies only, on the same Node LTS line the project runs (package.json "node").

FROM node:26-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# No production dependency needs an install script; skipping them keeps the build reproducible.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:26-slim AS runtime
ENV NODE_ENV=production \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
COPY commands ./commands
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
# The bot touches $DATA_DIR/heartbeat while its gateway session is ready (a web replica, INTERACTIONS=http, while it runs).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 CMD ["node", "src/ops/healthcheck.ts"]
CMD ["node", "--max-semi-space-size=8", "src/app/main.js"]
