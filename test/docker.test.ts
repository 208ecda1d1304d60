import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

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
    expect(runtime.lines.find((l) => l.startsWith('CMD'))).toBe('CMD ["node", "src/app/main.ts"]');
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
    // Stage 2: the COPY lines that take files from the build context.
    for (const line of runtime.lines.filter((l) => l.startsWith('COPY ') && !l.includes('--from'))) {
      const [, source = ''] = line.split(/\s+/);
      await cp(join(ROOT, source), join(app, source), { recursive: true });
    }
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

  it('starts: `node src/app/main.ts --help` loads every module and lists the configuration keys', async () => {
    const { stdout } = await run(process.execPath, ['src/app/main.ts', '--help'], {
      cwd: app,
      env: { PATH: '' },
    });
    expect(stdout).toContain('DISCORD_TOKEN');
    expect(stdout).toContain('WEB3BIO_API_KEY');
  });

  it('refuses to start without configuration, naming the missing keys', async () => {
    const result = await run(process.execPath, ['src/app/main.ts'], { cwd: app, env: { PATH: '' } }).catch(
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
  const { ConfigSchema } = await import('../src/app/config.ts');

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

  it('runs the bot, Redis and PostgreSQL, each with a health check', () => {
    const blocks = services();
    expect([...blocks.keys()].sort()).toEqual(['bot', 'postgres', 'redis']);
    for (const [name, block] of blocks) expect(block, name).toMatch(/^ {4}healthcheck:/m);
    expect(blocks.get('bot')).toContain('/readyz');
  });

  it('starts the bot once Redis and PostgreSQL are healthy', () => {
    const bot = services().get('bot') ?? '';
    const dependsOn = bot.split(/^ {4}depends_on:\n/m)[1]?.split(/^ {4}\S/m)[0] ?? '';
    expect(dependsOn).toMatch(/redis:\n\s+condition: service_healthy/);
    expect(dependsOn).toMatch(/postgres:\n\s+condition: service_healthy/);
  });

  it('sets only configuration keys the bot knows, and no password in clear', () => {
    const env = compose.split(/^x-bot-env: &bot-env\n/m)[1]?.split(/^\n/m)[0] ?? '';
    const keys = [...env.matchAll(/^ {2}([A-Z_]+):/gm)].map((m) => m[1]);
    expect(keys).toContain('REDIS_URL');
    expect(keys).toContain('DATABASE_URL');
    for (const key of keys) expect(Object.keys(ConfigSchema.shape), key).toContain(key);
    expect(compose).not.toMatch(/PASSWORD: (?!\$\{)/);
  });
});
