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
RUN mkdir -p /data /app/.compile-cache && chown node:node /data /app/.compile-cache
USER node
# Node's compile cache, filled now (`--help` loads every module, with CMD's V8 flags, which the cache is keyed
# on): every start of the image, the first included, compiles nothing and never loads the TypeScript
# transformer (src/app/main.js).
ENV NODE_COMPILE_CACHE=/app/.compile-cache
RUN node --max-semi-space-size=8 src/app/main.js --help > /dev/null
VOLUME ["/data"]
# The bot touches $DATA_DIR/heartbeat while its gateway session is ready (a web replica, INTERACTIONS=http, while it runs).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 CMD ["node", "src/ops/healthcheck.ts"]
CMD ["node", "--max-semi-space-size=8", "src/app/main.js"]
