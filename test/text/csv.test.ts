import { describe, expect, it } from 'vitest';
import { CSV_BOM, csvField, csvRow } from '../../src/text/csv.ts';

describe('csv', () => {
  it('quotes commas, quotes and line breaks (RFC 4180), CRLF rows', () => {
    expect(csvRow(['a', 'b,c', 'say "hi"', 'two\nlines', 'cr\rhere'])).toBe(
      'a,"b,c","say ""hi""","two\nlines","cr\rhere"\r\n',
    );
    expect(csvRow([null, undefined, 42, true, ''])).toBe(',,42,true,\r\n');
  });

  it('neutralises text a spreadsheet would run as a formula', () => {
    for (const start of ['=', '+', '-', '@', '\t', '\r'])
      expect(csvField(`${start}HYPERLINK("http://x")`).replace(/^"/, '')).toMatch(/^'/);
    expect(csvField('=1+1')).toBe("'=1+1");
    expect(csvField('=cmd|"/c calc"!A1')).toBe(`"'=cmd|""/c calc""!A1"`);
    expect(csvField('-2')).toBe("'-2");
    expect(csvField(-2)).toBe('-2');
    expect(csvField('a=b')).toBe('a=b');
  });

  it('keeps hostile Unicode as is and the BOM is U+FEFF', () => {
    const hostile = '\u202Egnp.exe 𝔘 ✓ <script>';
    expect(csvField(hostile)).toBe(hostile);
    expect(Buffer.from(CSV_BOM, 'utf8')).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
  });
});
