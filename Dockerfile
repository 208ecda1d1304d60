# syntax=docker/dockerfile:1
# Multi-stage: production dependencies only, on the same Node LTS line the project runs (package.json "node").

FROM node:26-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# No production dependency needs an install script; skipping them keeps the build reproducible.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:26-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
COPY commands ./commands
# What `npm start` runs: the bot bundled into dist/ (scripts/build.ts).
RUN node scripts/build.ts

FROM node:26-slim AS runtime
ENV NODE_ENV=production \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
# The sources stay for the other entry points (deploy-commands, lookup, the health check).
COPY src ./src
COPY commands ./commands
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
# The bot touches $DATA_DIR/heartbeat while its gateway session is ready (a web replica, INTERACTIONS=http, while it runs).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 CMD ["node", "src/ops/healthcheck.ts"]
# npm start's command (package.json; its V8 flags are explained in the README's "Memory and start-up").
CMD ["node", "--max-semi-space-size=2", "--max-opt=2", "--no-concurrent-recompilation", "dist/main.js"]
