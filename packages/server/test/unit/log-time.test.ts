import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { logTimeField } from '../../src/lib/clock.js';

describe('logTimeField', () => {
  it("writes pino's isoTime field, the same text within a millisecond", () => {
    const ours = logTimeField();
    const pinos = pino.stdTimeFunctions.isoTime();
    expect(ours).toMatch(/^,"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"$/);
    // Taken a moment apart: the two instants differ by a few milliseconds at most.
    const at = (field: string) => Date.parse((JSON.parse(`{"x":0${field}}`) as { time: string }).time);
    expect(Math.abs(at(pinos) - at(ours))).toBeLessThan(1000);
    // One millisecond's text is made once: calls until the clock moves answer that very string.
    const first = logTimeField();
    let next = logTimeField();
    while (next === first) next = logTimeField();
    expect(at(next)).toBeGreaterThan(at(first));
  });

  it('gives a logger the same lines as isoTime', () => {
    const lines: string[] = [];
    const logger = pino({ base: { service: 'svc' }, timestamp: logTimeField }, { write: (line: string) => void lines.push(line) });
    logger.info({ status: 200 }, 'request');
    expect(Object.keys(JSON.parse(lines[0]!) as object)).toEqual(['level', 'time', 'service', 'status', 'msg']);
  });
});
