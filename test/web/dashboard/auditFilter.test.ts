import { describe, expect, it } from 'vitest';
import { auditFilterOf } from '../../../src/web/dashboard/auditFilter.ts';

const GUILD = '100000000000000001';
const filterOf = (query: string) => auditFilterOf(GUILD, new URLSearchParams(query));

describe('the audit filter’s kind', () => {
  it('is one of the audit’s own kinds', () => {
    expect(filterOf('kind=role_added')).toMatchObject({ filter: { guildId: GUILD, kind: 'role_added' } });
    expect(filterOf('kind=')).toMatchObject({ filter: { guildId: GUILD } });
    expect(filterOf('kind=')).not.toHaveProperty('filter.kind');
  });

  it('refuses names every object inherits, cleanly, with nothing to filter on', () => {
    for (const kind of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'role_added ']) {
      const read = filterOf(`kind=${encodeURIComponent(kind)}`);
      if (kind === 'role_added ') {
        expect(read.filter?.kind).toBe('role_added');
        continue;
      }
      expect(read.error, kind).toBe('web.dashboard.bad.kind');
      expect(read.filter, kind).toBeUndefined();
      expect(read.form.kind).toBe(kind);
    }
  });
});
