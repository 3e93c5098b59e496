# agent-mailbox: one image for the API server (`serve`, the default) and the
# heartbeat daemon (`heartbeat`). Multi-stage: build with dev dependencies,
# run with production dependencies only, as the unprivileged `node` user.
# Used by docker-compose.yml; see README "Production".

# Node 22 LTS: Node 20 is end-of-life, and cookie@2 (via fastify) declares node >= 22.
# The project still runs and is tested on Node 20 too (.ci/run runs the suite on both).
ARG NODE_VERSION=22

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 (the SQLite views) is compiled from its sources (.prebuild-installrc: buildFromSource, no prebuilt binary
# fetched): node-gyp needs python3, make and g++ from Debian, and the image's own Node headers (npm_config_nodedir).
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local
COPY package.json package-lock.json .prebuild-installrc ./
# npm ci runs `prepare` (scripts/prepare.js), which builds nothing here: the build is the steps below.
COPY scripts/prepare.js ./scripts/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# Only the application is compiled into the image (no benchmarks, no tests).
RUN printf '{ "extends": "./tsconfig.build.json", "include": ["src"] }\n' > tsconfig.image.json \
 && npx tsc -p tsconfig.image.json
# The operator console (/console): web/ built by Vite from the npm packages installed above, nothing fetched.
COPY web ./web
RUN npm run build:console
# The runtime takes these node_modules (better-sqlite3 compiled above), without the dev dependencies.
RUN npm prune --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production \
    MAILBOX_HOST=0.0.0.0 \
    MAILBOX_PORT=7420 \
    MAILBOX_DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/console ./dist/console
COPY bin ./bin
# The data dir holds the generated admin token (when MAILBOX_ADMIN_TOKEN is unset) and, without
# MAILBOX_EVENTSTORE_URL, the SQLite log; it must be writable by the runtime user.
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 7420
VOLUME ["/data"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.MAILBOX_PORT || 7420) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/mailbox.js"]
CMD ["serve"]
