/** One address a name resolved to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Name resolution for webhook destinations: the runtime's own resolver (dns-resolver.ts), or a test's. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;
