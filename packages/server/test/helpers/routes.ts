/**
 * Every `METHOD /path` the app registered, read back from Fastify's route tree (printRoutes): each line is one node,
 * its indentation the depth, its text the path segment below its parent, its methods in brackets.
 */
export function registeredRoutes(tree: string): string[] {
  const stack: string[] = [];
  const out: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^(.*?)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = [...m[1]!].length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    const path = stack.join('');
    for (const method of (m[3] ?? '').split(', ').filter((x) => x !== '' && x !== 'HEAD')) out.push(`${method} ${path}`);
  }
  return out;
}
