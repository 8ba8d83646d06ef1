import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkAddress,
  checkDestination,
  DestinationError,
  isPublicAddress,
  parseCidrList,
  webhookUrlProblem,
  type ResolvedAddress,
  type Resolver,
} from '../../src/webhooks/destination-guard.js';
import { hostNameProblem, urlTextProblem } from '../../src/webhooks/destination-names.js';

const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });

// A fake DNS: names are matched without the trailing dot, as real DNS does; anything else does not exist.
const zone: Record<string, ResolvedAddress[]> = {
  'public.example': [v4('93.184.216.34')],
  'dual.example': [v4('1.1.1.1'), v6('2606:4700:4700::1111')],
  'mixed.example': [v4('93.184.216.34'), v4('10.0.0.1')],
  'mixed6.example': [v6('2606:4700:4700::1111'), v6('fd00::1')],
  'localhost': [v4('127.0.0.1'), v6('::1')],
  'azure-wire.example': [v4('168.63.129.16')],
  'imds.example': [v4('169.254.169.254')],
  'aws-imds6.example': [v6('fd00:ec2::254')],
  'mapped.example': [v6('::ffff:10.0.0.1')],
  'zoned.example': [v6('fe80::1%eth0')],
  'garbage.example': [v4('not-an-ip')],
  'shorthand.example': [v4('127.1')],
  'empty.example': [],
  // SPEC §12: names refused for what they are, here resolving to a public address (as a split-horizon DNS may).
  'intranet': [v4('93.184.216.34')],
  'printer.local': [v4('93.184.216.34')],
  'metadata.google.internal': [v4('93.184.216.34')],
  'nas.home.arpa': [v4('93.184.216.34')],
  'home.arpa': [v4('93.184.216.34')],
  'hidden.onion': [v4('93.184.216.34')],
  'app.localhost': [v4('93.184.216.34')],
  'notlocal': [v4('93.184.216.34')],
  'printer.notlocal': [v4('93.184.216.34')],
  'local.example': [v4('93.184.216.34')],
  'loop.local': [v4('127.0.0.1')],
  'split.local': [v4('127.0.0.1'), v4('93.184.216.34')],
  'box': [v4('127.0.0.2'), v6('::1')],
};
const lookups: string[] = [];
const resolver: Resolver = async (hostname) => {
  lookups.push(hostname);
  const found = zone[hostname.replace(/\.$/, '')];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found;
};
const none = parseCidrList('');

type Verdict = 'ok' | 'destination_refused' | 'dns_failed';
async function verdictOf(url: string, allow = none): Promise<Verdict> {
  try {
    await checkDestination(url, { resolver, allow });
    return 'ok';
  } catch (err) {
    if (err instanceof DestinationError) return err.code;
    throw err;
  }
}

// [host part of https://<host>/, expected]
const table: Array<[string, Verdict]> = [
  // IPv4: the special-purpose registry, entry by entry.
  ['0.0.0.0', 'destination_refused'],
  ['0.1.2.3', 'destination_refused'],
  ['10.0.0.1', 'destination_refused'],
  ['10.255.255.255', 'destination_refused'],
  ['100.64.0.1', 'destination_refused'],
  ['100.127.255.254', 'destination_refused'],
  ['127.0.0.1', 'destination_refused'],
  ['127.255.255.254', 'destination_refused'],
  ['169.254.0.1', 'destination_refused'],
  ['169.254.169.254', 'destination_refused'],
  ['172.16.0.1', 'destination_refused'],
  ['172.31.255.255', 'destination_refused'],
  ['192.0.0.1', 'destination_refused'],
  ['192.0.0.8', 'destination_refused'],
  ['192.0.0.170', 'destination_refused'],
  ['192.0.2.1', 'destination_refused'],
  ['192.88.99.1', 'destination_refused'],
  ['192.168.1.1', 'destination_refused'],
  ['198.18.0.1', 'destination_refused'],
  ['198.19.255.255', 'destination_refused'],
  ['198.51.100.7', 'destination_refused'],
  ['203.0.113.9', 'destination_refused'],
  ['224.0.0.1', 'destination_refused'],
  ['239.255.255.250', 'destination_refused'],
  ['240.0.0.1', 'destination_refused'],
  ['255.255.255.255', 'destination_refused'],
  ['168.63.129.16', 'destination_refused'],
  // IPv4 that must pass: well-known public hosts, the registry's global exceptions, the edges of refused blocks.
  ['8.8.8.8', 'ok'],
  ['1.1.1.1', 'ok'],
  ['93.184.216.34', 'ok'],
  ['192.0.0.9', 'ok'],
  ['192.0.0.10', 'ok'],
  ['192.31.196.1', 'ok'],
  ['172.15.255.255', 'ok'],
  ['172.32.0.1', 'ok'],
  ['100.63.255.255', 'ok'],
  ['100.128.0.1', 'ok'],
  ['169.255.0.1', 'ok'],
  ['198.20.0.1', 'ok'],
  ['223.255.255.254', 'ok'],
  // Other spellings of IPv4 that WHATWG URL normalises before we judge them.
  ['2130706433', 'destination_refused'],
  ['0x7f.1', 'destination_refused'],
  ['0x7f000001', 'destination_refused'],
  ['0177.0.0.1', 'destination_refused'],
  ['017700000001', 'destination_refused'],
  ['127.1', 'destination_refused'],
  ['0', 'destination_refused'],
  ['127.0.0.1.', 'destination_refused'],
  ['%31%32%37.0.0.1', 'destination_refused'],
  ['０x７f.1', 'destination_refused'],
  ['134744072', 'ok'],
  // IPv6: the special-purpose registry.
  ['[::]', 'destination_refused'],
  ['[::1]', 'destination_refused'],
  ['[0:0:0:0:0:0:0:1]', 'destination_refused'],
  ['[100::1]', 'destination_refused'],
  ['[100:0:0:1::1]', 'destination_refused'],
  ['[2001:2::1]', 'destination_refused'],
  ['[2001:10::1]', 'destination_refused'],
  ['[2001:db8::1]', 'destination_refused'],
  ['[2001:4::1]', 'destination_refused'],
  ['[3fff::1]', 'destination_refused'],
  ['[5f00::1]', 'destination_refused'],
  ['[fc00::1]', 'destination_refused'],
  ['[fd00:ec2::254]', 'destination_refused'],
  ['[fe80::1]', 'destination_refused'],
  ['[FE80::1]', 'destination_refused'],
  ['[febf:ffff::1]', 'destination_refused'],
  ['[fec0::1]', 'destination_refused'],
  ['[ff02::1]', 'destination_refused'],
  ['[ff0e::1]', 'destination_refused'],
  ['[4000::1]', 'destination_refused'],
  ['[::ffff:0:7f00:1]', 'destination_refused'],
  ['[2606:4700:4700::1111]', 'ok'],
  ['[2001:4860:4860::8888]', 'ok'],
  ['[2001:1::1]', 'ok'],
  ['[2001:3::1]', 'ok'],
  ['[2001:20::1]', 'ok'],
  ['[2620:4f:8000::1]', 'ok'],
  // IPv4 inside IPv6: judged by the IPv4.
  ['[::ffff:127.0.0.1]', 'destination_refused'],
  ['[::ffff:7f00:1]', 'destination_refused'],
  ['[0:0:0:0:0:ffff:a9fe:a9fe]', 'destination_refused'],
  ['[::ffff:168.63.129.16]', 'destination_refused'],
  ['[::ffff:8.8.8.8]', 'ok'],
  ['[::127.0.0.1]', 'destination_refused'],
  ['[::10.0.0.1]', 'destination_refused'],
  ['[::8.8.8.8]', 'ok'],
  ['[64:ff9b::127.0.0.1]', 'destination_refused'],
  ['[64:ff9b::a00:1]', 'destination_refused'],
  ['[64:ff9b::169.254.169.254]', 'destination_refused'],
  ['[64:ff9b::808:808]', 'ok'],
  ['[64:ff9b:1::7f00:1]', 'destination_refused'],
  ['[64:ff9b:1:7f00:0:100::]', 'destination_refused'],
  ['[64:ff9b:1::]', 'destination_refused'],
  ['[64:ff9b:1::808:808]', 'ok'],
  ['[2002:7f00:1::]', 'destination_refused'],
  ['[2002:a00:1::1]', 'destination_refused'],
  ['[2002:c0a8:101::]', 'destination_refused'],
  ['[2002:808:808::1]', 'ok'],
  // Teredo: 2001:0:<server v4>:<flags>:<port>:<client v4, inverted>.
  ['[2001:0:4136:e378:8000:63bf:f5ff:fffe]', 'destination_refused'],
  ['[2001:0:4136:e378:8000:63bf:80ff:fffe]', 'destination_refused'],
  ['[2001:0:a00:1:8000:63bf:f7f7:f7f7]', 'destination_refused'],
  ['[2001::1]', 'destination_refused'],
  ['[2001:0:4136:e378:8000:63bf:f7f7:f7f7]', 'ok'],
  // Names: every address must pass; case and the trailing dot change nothing.
  ['public.example', 'ok'],
  ['PUBLIC.Example', 'ok'],
  ['public.example.', 'ok'],
  ['dual.example', 'ok'],
  ['mixed.example', 'destination_refused'],
  ['mixed6.example', 'destination_refused'],
  ['localhost', 'destination_refused'],
  ['LOCALHOST.', 'destination_refused'],
  ['azure-wire.example', 'destination_refused'],
  ['imds.example', 'destination_refused'],
  ['aws-imds6.example', 'destination_refused'],
  ['mapped.example', 'destination_refused'],
  ['zoned.example', 'destination_refused'],
  ['garbage.example', 'destination_refused'],
  ['shorthand.example', 'destination_refused'],
  ['nowhere.example', 'dns_failed'],
  ['empty.example', 'dns_failed'],
  // Names refused whatever they resolve to (SPEC §12): a single label, local-only suffixes, in any case, with a dot.
  ['intranet', 'destination_refused'],
  ['intranet.', 'destination_refused'],
  ['INTRANET', 'destination_refused'],
  ['notlocal', 'destination_refused'],
  ['printer.local', 'destination_refused'],
  ['Printer.LOCAL.', 'destination_refused'],
  ['metadata.google.internal', 'destination_refused'],
  ['metadata.google.internal.', 'destination_refused'],
  ['nas.home.arpa', 'destination_refused'],
  ['home.arpa', 'destination_refused'],
  ['hidden.onion', 'destination_refused'],
  ['app.localhost', 'destination_refused'],
  ['unresolvable.local', 'destination_refused'],
  ['printer.notlocal', 'ok'],
  ['local.example', 'ok'],
];

describe('checkDestination', () => {
  it('has a table of at least 60 destinations', () => {
    expect(table.length).toBeGreaterThanOrEqual(60);
  });

  it.each(table)('https://%s/ → %s', async (host, expected) => {
    expect(await verdictOf(`https://${host}/hook?x=1`)).toBe(expected);
  });

  it('judges IP literals without a look-up', async () => {
    lookups.length = 0;
    await verdictOf('https://8.8.8.8/');
    await verdictOf('https://[::ffff:127.0.0.1]/');
    await verdictOf('https://0x7f.1/');
    expect(lookups).toEqual([]);
  });

  it('resolves the host as the URL normalised it', async () => {
    lookups.length = 0;
    await verdictOf('https://PUBLIC.Example.:8443/path');
    expect(lookups).toEqual(['public.example.']);
  });

  it('returns the checked addresses', async () => {
    const found = await checkDestination('https://dual.example/', { resolver, allow: none });
    expect(found).toEqual(zone['dual.example']);
    expect(await checkDestination('https://[2606:4700:4700::1111]:8443/', { resolver, allow: none })).toEqual([v6('2606:4700:4700::1111')]);
  });

  it('names the refused address but never the path or query', async () => {
    const err = await checkDestination('https://mixed.example/secret-path?token=abc', { resolver, allow: none }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DestinationError);
    expect((err as Error).message).toContain('10.0.0.1');
    expect((err as Error).message).not.toMatch(/secret|token/);
  });

  it('refuses a URL that breaks the syntax rule', async () => {
    expect(await verdictOf('http://public.example/')).toBe('destination_refused');
    expect(await verdictOf('https://user:pw@public.example/')).toBe('destination_refused');
  });
});

describe('webhookUrlProblem', () => {
  it.each([
    ['https://example.com/hook', null],
    ['https://example.com:8443/hook?x=1#f', null],
    ['HTTPS://EXAMPLE.COM/', null],
    ['https://[2606:4700:4700::1111]/', null],
  ])('accepts %s', (url, expected) => {
    expect(webhookUrlProblem(url)).toBe(expected);
  });

  it.each([
    'http://example.com/hook',
    'ftp://example.com/',
    'ws://example.com/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'https://user@example.com/',
    'https://:secret@example.com/',
    'https://user:secret@example.com/',
    '/relative/path',
    'example.com/hook',
    '//example.com/hook',
    'https://',
    'https://[::1/',
    '',
  ])('refuses %s', (url) => {
    expect(webhookUrlProblem(url)).toEqual(expect.any(String));
  });
});

describe('the allow list', () => {
  const allow = parseCidrList('127.0.0.0/8, ::1/128');

  it.each([
    ['https://127.0.0.1:8443/', 'ok'],
    ['https://127.1.2.3/', 'ok'],
    ['https://[::1]/', 'ok'],
    ['https://[::ffff:127.0.0.1]/', 'ok'],
    ['https://localhost/', 'ok'],
    ['https://10.0.0.1/', 'destination_refused'],
    ['https://[::2]/', 'destination_refused'],
    ['https://[64:ff9b::7f00:1]/', 'destination_refused'],
    ['https://mixed.example/', 'destination_refused'],
    ['https://8.8.8.8/', 'ok'],
    // A refused name passes only when every address it resolves to is allowed (SPEC §12).
    ['https://loop.local/', 'ok'],
    ['https://box./', 'ok'],
    ['https://split.local/', 'destination_refused'],
    ['https://printer.local/', 'destination_refused'],
    ['https://intranet/', 'destination_refused'],
    ['https://unresolvable.local/', 'destination_refused'],
    ['https://127.0.0.1:0/', 'ok'],
    ['https://localhost:0/', 'ok'],
    ['https://public.example:0/', 'destination_refused'],
    ['https://local\thost/', 'ok'],
    ['https://pub\tlic.example/', 'destination_refused'],
  ] as const)('%s → %s', async (url, expected) => {
    expect(await verdictOf(url, allow)).toBe(expected);
  });

  it('lets an operator allow even a metadata address, explicitly', () => {
    expect(checkAddress('168.63.129.16', parseCidrList('168.63.129.16/32'))).toEqual({ ok: true });
    expect(checkAddress('168.63.129.16', none).ok).toBe(false);
  });

  it('parses entries, bare hosts and an empty setting', () => {
    expect(parseCidrList('')).toEqual([]);
    expect(parseCidrList(' , ')).toEqual([]);
    expect(parseCidrList('10.0.0.0/8,fd00::/8').map(([addr, bits]) => `${addr.toString()}/${bits}`)).toEqual(['10.0.0.0/8', 'fd00::/8']);
    expect(parseCidrList('10.1.2.3').map(([addr, bits]) => `${addr.toString()}/${bits}`)).toEqual(['10.1.2.3/32']);
  });

  it.each(['nonsense', 'fe80::1%eth0/64', '10.0.0.0/33', '::1/129', '0x7f.1/8', '127.1/8', '10.0.0.0/8/1', '10.0.0.0/', '10.0.0.0/ 8x'])('names the bad entry %s', (entry) => {
    expect(() => parseCidrList(`127.0.0.0/8,${entry}`)).toThrow(entry.trim());
  });
});

describe('URL text (SPEC §12)', () => {
  it.each([
    ['https://exa\tmple.com/', 'a tab (U+0009) at position 11'],
    ['https://example.com/\n', 'a line break (U+000A) at position 20'],
    ['https://example.com/a b', 'a space (U+0020) at position 21'],
    [' https://example.com/', 'a space (U+0020) at position 0'],
    ['https://example.com/\u0000', 'a control character (U+0000) at position 20'],
    ['https://example.com/\u007f', 'a control character (U+007F) at position 20'],
    ['https://exa\rmple.com/', 'a line break (U+000D) at position 11'],
    ['https://example.com:0/', 'names port 0'],
    ['https://example.com:00/x', 'names port 0'],
  ])('%j is refused: %s', async (url, why) => {
    expect(urlTextProblem(url)).toContain(why);
    lookups.length = 0;
    const err = await checkDestination(url.replace('example.com', 'public.example'), { resolver, allow: none }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'destination_refused' });
    // Nothing can excuse it with an empty allow list: no look-up is made.
    expect(lookups).toEqual([]);
  });

  it.each(['https://example.com/', 'https://example.com:8443/a?b=c#d', 'https://example.com:10/', 'https://example.com/%20%09'])('%s is fine', (url) => {
    expect(urlTextProblem(url)).toBeNull();
  });

  it('refuses a name by what it is before any look-up when nothing is allowed', async () => {
    lookups.length = 0;
    for (const host of ['intranet', 'printer.local', 'hidden.onion', 'metadata.google.internal']) {
      expect(await verdictOf(`https://${host}/`)).toBe('destination_refused');
    }
    expect(lookups).toEqual([]);
  });

  it('names the rule, never the path or query', async () => {
    const named = await checkDestination('https://printer.local/secret-path?token=abc', { resolver, allow: none }).catch((e: unknown) => e);
    expect((named as Error).message).toContain('.local');
    const text = await checkDestination('https://public.example/secret path?token=abc', { resolver, allow: none }).catch((e: unknown) => e);
    expect((text as Error).message).toContain('a space');
    for (const err of [named, text]) expect((err as Error).message).not.toMatch(/secret|token/);
  });

  it('judges host names label by label, ignoring case and trailing dots', () => {
    expect(hostNameProblem('intranet')).toContain('single-label');
    expect(hostNameProblem('PRINTER.Local..')).toContain('.local');
    expect(hostNameProblem('x.y.home.arpa')).toContain('.home.arpa');
    expect(hostNameProblem('arpa')).toContain('single-label');
    expect(hostNameProblem('in-addr.arpa')).toBeNull();
    expect(hostNameProblem('mylocal.com')).toBeNull();
    expect(hostNameProblem('onion.example')).toBeNull();
    expect(hostNameProblem('127.0.0.1')).toBeNull();
    expect(hostNameProblem('::1')).toBeNull();
  });
});

describe('isPublicAddress and checkAddress', () => {
  it('accepts only strict address forms', () => {
    expect(isPublicAddress('8.8.8.8')).toBe(true);
    expect(isPublicAddress('2606:4700:4700::1111')).toBe(true);
    for (const odd of ['', '127.1', '0x7f000001', '2130706433', 'example.com', '[::1]', '2606:4700:4700::1111%eth0']) {
      expect(isPublicAddress(odd)).toBe(false);
    }
  });

  it('gives a reason', () => {
    const verdict = checkAddress('::ffff:a00:1', none);
    expect(verdict).toEqual({ ok: false, reason: expect.stringContaining('10.0.0.1') });
  });
});

describe('IPv4 inside IPv6 (properties)', () => {
  const privateBlocks: Array<[number, number]> = [
    [0x0a000000, 8], // 10/8
    [0x7f000000, 8], // 127/8
    [0xc0a80000, 16], // 192.168/16
    [0xac100000, 12], // 172.16/12
  ];
  const dotted = (n: number): string => [24, 16, 8, 0].map((s) => (n >>> s) & 0xff).join('.');
  const hex = (n: number): string => `${((n >>> 16) & 0xffff).toString(16)}:${(n & 0xffff).toString(16)}`;
  const privateV4 = fc
    .tuple(fc.constantFrom(...privateBlocks), fc.nat())
    .map(([[base, bits], offset]) => (base + (offset % 2 ** (32 - bits))) >>> 0);

  it('refuses the mapped, NAT64, compatible and 6to4 forms of private IPv4', async () => {
    await fc.assert(
      fc.asyncProperty(privateV4, async (n) => {
        for (const host of [dotted(n), `[::ffff:${dotted(n)}]`, `[::ffff:${hex(n)}]`, `[64:ff9b::${dotted(n)}]`, `[64:ff9b::${hex(n)}]`, `[::${dotted(n)}]`, `[2002:${hex(n)}::1]`]) {
          expect(await verdictOf(`https://${host}/`)).toBe('destination_refused');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('judges every mapped and NAT64 form exactly like the IPv4 inside', () => {
    fc.assert(
      fc.property(fc.nat({ max: 0xffffffff }), (n) => {
        const plain = isPublicAddress(dotted(n));
        expect(isPublicAddress(`::ffff:${dotted(n)}`)).toBe(plain);
        expect(isPublicAddress(`64:ff9b::${hex(n)}`)).toBe(plain);
        expect(isPublicAddress(`2002:${hex(n)}::`)).toBe(plain);
      }),
      { numRuns: 2000 },
    );
  });
});
