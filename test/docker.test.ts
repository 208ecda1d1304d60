import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist } from '../scripts/build.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');

interface Stage {
  from: string;
  name: string | undefined;
  lines: string[];
}

/** Split the Dockerfile into stages of instruction lines (continuations joined, comments dropped). */
function parseDockerfile(text: string): Stage[] {
  const lines = text
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of lines) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from?.[1]) stages.push({ from: from[1], name: from[2], lines: [] });
    else stages.at(-1)?.lines.push(line);
  }
  return stages;
}

const dockerfile = parseDockerfile(await readFile(join(ROOT, 'Dockerfile'), 'utf8'));
const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  devDependencies: Record<string, string>;
  dependencies: Record<string, string>;
};
const runtime = dockerfile.at(-1) as Stage;

describe('Dockerfile', () => {
  it('is multi-stage on the Node LTS line the project brings itself', () => {
    expect(dockerfile.length).toBeGreaterThanOrEqual(2);
    const nodeMajor = /(\d+)/.exec(pkg.devDependencies.node ?? '')?.[1];
    for (const stage of dockerfile) expect(stage.from).toBe(`node:${nodeMajor}-slim`);
  });

  it('installs production dependencies only and runs as a non-root user with a health check', () => {
    const deps = dockerfile[0] as Stage;
    expect(deps.lines.some((l) => /npm ci\b.*--omit=dev/.test(l))).toBe(true);
    const user = runtime.lines.find((l) => l.startsWith('USER '));
    expect(user).toBeDefined();
    expect(user).not.toMatch(/root|\b0\b/);
    expect(
      runtime.lines.some((l) => l.startsWith('HEALTHCHECK') && l.includes('src/ops/healthcheck.ts')),
    ).toBe(true);
    // CMD is npm start's command (the start script), flags included; npm start's build runs in a stage.
    const start = (pkg.scripts.start ?? '').split(/\s+/);
    expect(runtime.lines.find((l) => l.startsWith('CMD'))).toBe(
      `CMD ${JSON.stringify(start).replace(/","/g, '", "')}`,
    );
    expect(start.at(-1)).toBe('dist/main.js');
    expect(pkg.scripts.prestart).toBe('node scripts/build.ts');
    const build = dockerfile.find((stage) => stage.name === 'build');
    expect(build?.lines).toContain('RUN node scripts/build.ts');
    expect(runtime.lines).toContain('COPY --from=build /app/dist ./dist');
  });
});

describe('the production tree, built the way the Dockerfile builds it', () => {
  let app: string;
  beforeAll(async () => {
    app = await mkdtemp(join(tmpdir(), 'bot-image-'));
    // Stage 1: the lock-file install without dev dependencies, exactly as the Dockerfile runs it.
    await cp(join(ROOT, 'package.json'), join(app, 'package.json'));
    await cp(join(ROOT, 'package-lock.json'), join(app, 'package-lock.json'));
    const install = (dockerfile[0] as Stage).lines.find((l) => l.startsWith('RUN npm ci')) ?? '';
    const args = install.replace(/^RUN npm /, '').split(/\s+/);
    await run('npm', [...args, '--prefer-offline'], { cwd: app, timeout: 240_000 });
    // The runtime stage: the COPY lines that take files from the build context, and dist/ as the build
    // stage makes it.
    for (const line of runtime.lines.filter((l) => l.startsWith('COPY ') && !l.includes('--from'))) {
      const [, source = ''] = line.split(/\s+/);
      await cp(join(ROOT, source), join(app, source), { recursive: true });
    }
    await buildDist(join(app, 'dist'));
  }, 300_000);
  afterAll(() => rm(app, { recursive: true, force: true }));

  it('has no development tools', async () => {
    // `ws` is a dev dependency production packages also pull in, and npm keeps `typescript` for viem's
    // optional peer; these tools are dev-only.
    for (const dev of [
      'vitest',
      '@biomejs/biome',
      'node',
      'playwright-core',
      'esbuild',
      '@skyra/discord-components-core',
    ]) {
      expect(pkg.devDependencies).toHaveProperty(dev);
      await expect(stat(join(app, 'node_modules', dev))).rejects.toThrow();
    }
    for (const dep of Object.keys(pkg.dependencies)) {
      expect((await stat(join(app, 'node_modules', dep))).isDirectory()).toBe(true);
    }
  });

  it('starts: `node dist/main.js --help` loads every module and lists the configuration keys', async () => {
    const { stdout } = await run(process.execPath, ['dist/main.js', '--help'], {
      cwd: app,
      env: { PATH: '' },
    });
    expect(stdout).toContain('DISCORD_TOKEN');
    expect(stdout).toContain('WEB3BIO_API_KEY');
  });

  it('refuses to start without configuration, naming the missing keys', async () => {
    const result = await run(process.execPath, ['dist/main.js'], { cwd: app, env: { PATH: '' } }).catch(
      (e) => e,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/DISCORD_TOKEN is required/);
    expect(result.stderr).toMatch(/\.env\.example/);
  });

  it('health check: unhealthy without a heartbeat, healthy with a fresh one', async () => {
    const dataDir = join(app, 'data');
    const check = () =>
      run(process.execPath, ['src/ops/healthcheck.ts'], { cwd: app, env: { DATA_DIR: dataDir } }).then(
        () => 0,
        (e: { code: number }) => e.code,
      );
    expect(await check()).toBe(1);
    await mkdir(dataDir, { recursive: true });
    await writeFile(join(dataDir, 'heartbeat'), String(Date.now()));
    expect(await check()).toBe(0);
  });
});

describe('compose.yaml', async () => {
  const compose = await readFile(join(ROOT, 'compose.yaml'), 'utf8');
  const haproxy = await readFile(join(ROOT, 'deploy/haproxy/haproxy.cfg'), 'utf8');
  const { ConfigSchema, loadConfig } = await import('../src/app/config.ts');

  /** The top-level blocks under `services:`, by name (two-space indented keys). */
  function services(): Map<string, string> {
    const body = compose.split(/^services:\n/m)[1]?.split(/^\S/m)[0] ?? '';
    const blocks = new Map<string, string>();
    for (const block of body.split(/^(?= {2}\S)/m)) {
      const name = /^ {2}([\w-]+):/.exec(block)?.[1];
      if (name) blocks.set(name, block);
    }
    return blocks;
  }

  interface Service {
    profiles?: string[];
    image?: string;
    build?: unknown;
    environment?: Record<string, string>;
    deploy?: { replicas?: number };
    depends_on?: Record<string, { condition: string }>;
    healthcheck?: { test: string[] };
    ports?: string[];
    volumes?: string[];
  }

  /**
   * The file as Compose itself reads it: Debian's `docker-compose` (scripts/test-prereqs.sh installs it;
   * Compose v1.29, which has profiles) validates it against the Compose Specification schema of its day
   * (the test below checks today's), interpolates the variables from `.env`,
   * checks every service it references, and prints the result, read back here as JSON. The project is
   * a copy with a `.env` as README's set-up makes it.
   */
  async function composeConfig(
    args: string[],
    dotEnv: string,
  ): Promise<{ services: Record<string, Service> }> {
    const dir = await mkdtemp(join(tmpdir(), 'compose-'));
    try {
      await cp(join(ROOT, 'compose.yaml'), join(dir, 'compose.yaml'));
      await cp(join(ROOT, 'deploy'), join(dir, 'deploy'), { recursive: true });
      await writeFile(join(dir, '.env'), dotEnv);
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
      const { stdout } = await run('docker-compose', ['-f', 'compose.yaml', ...args, 'config'], {
        cwd: dir,
        env,
      });
      const json = await new Promise<string>((resolve, reject) => {
        const child = execFile(
          'python3',
          ['-c', 'import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)'],
          (error, out) => (error ? reject(error) : resolve(out)),
        );
        child.stdin?.end(stdout);
      });
      return JSON.parse(json);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  const DOT_ENV = 'DISCORD_TOKEN=t\nREDIS_PASSWORD=redis-pass-in-env\nPOSTGRES_PASSWORD=pg-pass-in-env\n';
  /** The services `docker compose --profile <profile> up` starts: those without profiles, and the profile's. */
  const started = (all: Record<string, Service>, profile: string | undefined) =>
    Object.entries(all)
      .filter(([, s]) => !s.profiles || (profile !== undefined && s.profiles.includes(profile)))
      .map(([name]) => name)
      .sort();

  it('is valid Compose for each profile, with the passwords taken from .env', async () => {
    for (const args of [[], ['--profile', 'gateway'], ['--profile', 'http']]) {
      const { services: resolved } = await composeConfig(args, DOT_ENV);
      expect(resolved.redis?.environment?.REDIS_PASSWORD, args.join(' ')).toBe('redis-pass-in-env');
      expect(resolved.bot?.environment?.DATABASE_URL).toBe('postgres://bot:pg-pass-in-env@postgres:5432/bot');
    }
    const refused = await composeConfig(['--profile', 'http'], 'DISCORD_TOKEN=t\n').catch((e) => e);
    expect(String(refused.stderr)).toMatch(/set (REDIS|POSTGRES)_PASSWORD/);
  }, 60_000);

  it('matches the current Compose Specification schema (dclint ships it), which refuses an unknown key', async () => {
    const dclint = join(ROOT, 'node_modules/.bin/dclint');
    // --quiet: schema errors only, not dclint's style rules (key order and the like).
    const { stdout } = await run(dclint, ['--quiet', '--color', 'false', 'compose.yaml'], { cwd: ROOT });
    expect(stdout.trim()).toBe('');
    const dir = await mkdtemp(join(tmpdir(), 'compose-'));
    try {
      await writeFile(join(dir, 'compose.yaml'), compose.replace('      replicas: 2', '      replica: 2'));
      const refused = await run(dclint, ['--quiet', '--color', 'false', 'compose.yaml'], { cwd: dir }).catch(
        (e) => e,
      );
      expect(refused.code).toBe(1);
      expect(refused.stdout).toMatch(/\/services\/web\/deploy.*must NOT have additional properties/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('runs the gateway bot, or the HTTP topology, never both', async () => {
    const { services: all } = await composeConfig([], DOT_ENV);
    expect(started(all, undefined)).toEqual(['postgres', 'redis']);
    expect(started(all, 'gateway')).toEqual(['bot', 'postgres', 'redis', 'rest-proxy']);
    expect(started(all, 'http')).toEqual(['gateway', 'lb', 'postgres', 'redis', 'rest-proxy', 'web']);
    // The default bot is today's: interactions over the gateway, one process doing everything.
    expect(all.bot?.environment).not.toHaveProperty('INTERACTIONS');
    expect(all.bot?.environment).not.toHaveProperty('PROCESS_ROLE');
  }, 60_000);

  it('http profile: 2 web replicas and one gateway worker, on the same Redis and PostgreSQL', async () => {
    const { services: all } = await composeConfig(['--profile', 'http'], DOT_ENV);
    const web = all.web as Service;
    const gateway = all.gateway as Service;
    expect(web.deploy?.replicas).toBe(2);
    expect(web.environment).toMatchObject({ INTERACTIONS: 'http', PROCESS_ROLE: 'web', HTTP_PORT: '8080' });
    // Behind the terminator and the load balancer: per-client limits see the member, not the proxy.
    expect(web.environment?.TRUST_PROXY).toBe('2');
    expect(web.healthcheck?.test.join(' ')).toContain('http://127.0.0.1:8080/healthz');
    expect(gateway.deploy?.replicas ?? 1).toBe(1);
    expect(gateway.environment).toMatchObject({ INTERACTIONS: 'http', PROCESS_ROLE: 'gateway' });
    expect(gateway.healthcheck?.test.join(' ')).toContain('/readyz');
    expect(gateway.ports).toBeUndefined();
    expect(web.ports).toBeUndefined();
    for (const service of [web, gateway]) {
      expect(service.environment?.REDIS_URL).toBe(all.bot?.environment?.REDIS_URL);
      expect(service.environment?.DATABASE_URL).toBe(all.bot?.environment?.DATABASE_URL);
      expect(service.depends_on).toEqual({
        redis: { condition: 'service_healthy' },
        postgres: { condition: 'service_healthy' },
        'rest-proxy': { condition: 'service_healthy' },
      });
      // What the file sets (.env's own keys, passed through env_file, aside).
      const fromFile = Object.keys(service.environment ?? {}).filter((k) => !DOT_ENV.includes(`${k}=`));
      for (const key of fromFile) {
        expect(Object.keys(ConfigSchema.shape), key).toContain(key);
      }
    }
  }, 60_000);

  it("each bot service's environment passes the bot's own start-up checks, gating on and sharded", async () => {
    // A full .env for the http topology: gating on, SHARD_COUNT for the gateway worker, METRICS_TOKEN
    // (METRICS_HOST is 0.0.0.0), TOKEN_ENCRYPTION_KEY (it seals the tokens the replicas hand over).
    const full = [
      DOT_ENV,
      'DISCORD_APPLICATION_ID=123456789012345678',
      `DISCORD_PUBLIC_KEY=${'ab'.repeat(32)}`,
      `TOKEN_ENCRYPTION_KEY=${'cd'.repeat(32)}`,
      'PUBLIC_URL=https://bot.example.org',
      'GATING_ENABLED=true',
      'SHARD_COUNT=2',
      'METRICS_TOKEN=metrics-token-of-20ch',
      '',
    ].join('\n');
    const { services: all } = await composeConfig(['--profile', 'http'], full);
    const roles: Record<string, [string, string]> = {
      web: ['http', 'web'],
      gateway: ['http', 'gateway'],
      bot: ['gateway', 'all'],
    };
    for (const [name, [interactions, role]] of Object.entries(roles)) {
      const env = all[name]?.environment;
      const config = loadConfig({ ...env });
      expect([config.INTERACTIONS, config.PROCESS_ROLE], name).toEqual([interactions, role]);
      expect(config.DATABASE_URL, name).toBe('postgres://bot:pg-pass-in-env@postgres:5432/bot');
    }
    expect(loadConfig({ ...all.web?.environment }).SHARD_COUNT).toBeUndefined();
    expect(loadConfig({ ...all.gateway?.environment }).SHARD_COUNT).toBeDefined();
  }, 60_000);

  it('http profile: the load balancer round-robins over the healthy web replicas', async () => {
    const { services: all } = await composeConfig(['--profile', 'http'], DOT_ENV);
    const lb = all.lb as Service;
    expect(lb.image).toMatch(/^haproxy:\d+\.\d+-alpine$/);
    expect(lb.depends_on).toEqual({ web: { condition: 'service_healthy' } });
    expect(
      lb.volumes?.some((v) =>
        v.endsWith('/deploy/haproxy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro'),
      ),
    ).toBe(true);
    // Published on loopback, for a TLS terminator on the same host.
    expect(lb.ports).toEqual(['127.0.0.1:8080:8080/tcp']);
    expect(haproxy).toMatch(/^\s+bind :8080$/m);
    expect(haproxy).toMatch(/^\s+option forwardfor$/m);
    const backend = haproxy.split(/^backend web$/m)[1] ?? '';
    expect(backend).toMatch(/^\s+balance roundrobin$/m);
    expect(backend).toMatch(/^\s+http-check send meth GET uri \/healthz$/m);
    expect(backend).toMatch(/^\s+server-template web- \d+ web:8080 check .*resolvers docker/m);
    expect(haproxy).toMatch(/^\s+nameserver \w+ 127\.0\.0\.11:53$/m);
  }, 60_000);

  it("health checks pass against the bot's own routes: /readyz with METRICS_TOKEN, /healthz open", async () => {
    const { default: Fastify } = await import('fastify');
    const { registerOpsRoutes } = await import('../src/web/ops.ts');
    const { services: all } = await composeConfig(['--profile', 'http'], DOT_ENV);
    const token = 'metrics-token-of-20ch';
    let ready = true;
    const app = Fastify();
    registerOpsRoutes(app, {
      metrics: false,
      metricsToken: token,
      openWithoutToken: false,
      readiness: { gateway: () => (ready ? undefined : Promise.reject(new Error('down'))) },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    /** Runs a service's `CMD node -e <script>` health check against this app, as the container would. */
    const check = (name: string, env: Record<string, string>) => {
      const [kind, node, flag, script = ''] = all[name]?.healthcheck?.test ?? [];
      expect([kind, node, flag]).toEqual(['CMD', 'node', '-e']);
      const local = script.replace(/127\.0\.0\.1:(8080|9464)/, `127.0.0.1:${port}`);
      return run(process.execPath, ['-e', local], { env }).then(
        () => 0,
        (e: { code: number }) => e.code,
      );
    };
    try {
      for (const name of ['bot', 'gateway']) {
        expect(await check(name, { METRICS_TOKEN: token }), name).toBe(0);
        expect(await check(name, { METRICS_TOKEN: 'another-token-of-20ch' }), name).toBe(1);
        ready = false;
        expect(await check(name, { METRICS_TOKEN: token }), name).toBe(1);
        ready = true;
      }
      expect(await check('web', {})).toBe(0);
    } finally {
      await app.close();
    }
  }, 60_000);

  it('rest-proxy: one in either profile, its own keys only, every other service sending through it', async () => {
    const { loadRestProxyConfig } = await import('../src/app/restProxyConfig.ts');
    for (const profile of ['gateway', 'http']) {
      const { services: all } = await composeConfig(['--profile', profile], DOT_ENV);
      const proxy = all['rest-proxy'];
      expect(proxy?.environment, profile).toMatchObject({
        PROCESS_ROLE: 'rest-proxy',
        DISCORD_API_URL: 'https://discord.com/api',
        REST_PROXY_HOST: '0.0.0.0',
        REST_PROXY_PORT: '8080',
      });
      expect(loadRestProxyConfig({ ...proxy?.environment })).toMatchObject({
        DISCORD_TOKEN: 't',
        REST_PROXY_PORT: 8080,
      });
      expect(proxy?.ports).toBeUndefined();
      expect(proxy?.deploy?.replicas ?? 1).toBe(1);
      for (const name of profile === 'http' ? ['web', 'gateway'] : ['bot']) {
        expect(all[name]?.environment?.DISCORD_API_URL, name).toBe('http://rest-proxy:8080/api');
        // Members' browsers open the OAuth2 page at Discord, not at the proxy they cannot reach.
        expect(all[name]?.environment?.DISCORD_WEB_URL, name).toBe('https://discord.com/api');
      }
    }
    // .env's DISCORD_API_URL is where the proxy reaches Discord; the others still send through the proxy.
    const { services: offline } = await composeConfig(
      ['--profile', 'http'],
      `${DOT_ENV}DISCORD_API_URL=http://10.0.0.9:8787/api\n`,
    );
    expect(offline['rest-proxy']?.environment?.DISCORD_API_URL).toBe('http://10.0.0.9:8787/api');
    expect(offline.web?.environment?.DISCORD_API_URL).toBe('http://rest-proxy:8080/api');
    expect(offline.web?.environment?.DISCORD_WEB_URL).toBe('http://10.0.0.9:8787/api');
  }, 60_000);

  it("rest-proxy's health check passes against the proxy itself", async () => {
    const { startRestProxy } = await import('../src/app/restProxy.ts');
    const { createLogger } = await import('../src/ops/log.ts');
    const script = /fetch\('http:\/\/127\.0\.0\.1:8080\/healthz'\)[^"]*/.exec(
      services().get('rest-proxy') ?? '',
    )?.[0];
    expect(script).toBeDefined();
    const proxy = await startRestProxy(
      {
        DISCORD_TOKEN: 't',
        DISCORD_API_URL: undefined,
        REST_PROXY_HOST: '127.0.0.1',
        REST_PROXY_PORT: 0,
        LOG_LEVEL: 'silent',
        DATA_DIR: './data',
      },
      createLogger({ level: 'silent', secrets: [] }),
    );
    try {
      const local = (script ?? '').replace('127.0.0.1:8080', new URL(proxy.url).host);
      await expect(run(process.execPath, ['-e', local])).resolves.toBeDefined();
    } finally {
      await proxy.stop();
    }
    const stopped = (script ?? '').replace('127.0.0.1:8080', new URL(proxy.url).host);
    await expect(run(process.execPath, ['-e', stopped])).rejects.toMatchObject({ code: 1 });
  });

  it('every service has a health check; the bot and the gateway worker report readiness', () => {
    const blocks = services();
    expect([...blocks.keys()].sort()).toEqual([
      'bot',
      'gateway',
      'lb',
      'postgres',
      'redis',
      'rest-proxy',
      'web',
    ]);
    for (const [name, block] of blocks) expect(block, name).toMatch(/^ {4}healthcheck:/m);
    expect(blocks.get('bot')).toContain('/readyz');
  });

  it('starts the bot once Redis and PostgreSQL are healthy', () => {
    const bot = services().get('bot') ?? '';
    const dependsOn = bot.split(/^ {4}depends_on:\n/m)[1]?.split(/^ {4}\S/m)[0] ?? '';
    expect(dependsOn).toMatch(/redis:\n\s+condition: service_healthy/);
    expect(dependsOn).toMatch(/postgres:\n\s+condition: service_healthy/);
  });

  it('sets only configuration keys the bot knows, and no secret in clear', () => {
    const env = compose.split(/^x-bot-env: &bot-env\n/m)[1]?.split(/^\n/m)[0] ?? '';
    const keys = [...env.matchAll(/^ {2}([A-Z_]+):/gm)].map((m) => m[1]);
    expect(keys).toContain('REDIS_URL');
    expect(keys).toContain('DATABASE_URL');
    for (const key of keys) expect(Object.keys(ConfigSchema.shape), key).toContain(key);
    expect(compose).not.toMatch(/PASSWORD: (?!\$\{)/);
    // A password in a URL is always a variable; the bot's secrets come from .env, never from this file.
    expect(compose).not.toMatch(/:\/\/[^\s@/]*:(?!\$\{)[^\s@]*@/);
    for (const secret of [
      'DISCORD_TOKEN',
      'DISCORD_CLIENT_SECRET',
      'TOKEN_ENCRYPTION_KEY',
      'METRICS_TOKEN',
      'WEB3BIO_API_KEY',
    ]) {
      expect(compose).not.toMatch(new RegExp(`^\\s+${secret}:`, 'm'));
    }
  });
});
