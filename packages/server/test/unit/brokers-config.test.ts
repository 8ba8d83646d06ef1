import { describe, expect, it } from 'vitest';
import { brokerAddress } from '../../src/config/brokers.js';
import { ConfigError, loadConfig } from '../../src/config/load.js';

/** SVC_BROKERS (SPEC §14): bad syntax stops the start naming the variable, and never prints a credential. */
describe('SVC_BROKERS', () => {
  it('is empty by default', () => {
    expect(loadConfig({}).brokers).toEqual([]);
  });

  it('names each broker with its kind, by scheme; spaces and empty entries are ignored', () => {
    const { brokers } = loadConfig({
      SVC_BROKERS: ' events=nats://svc:pw@10.0.0.5:4222 , mq=amqps://u:p@mq.example:5671/prod,,cache=rediss://:pw@[::1]:6380/2,q2=amqp://mq,r=redis://cache ',
    });
    expect(brokers).toEqual([
      { name: 'events', kind: 'nats', url: 'nats://svc:pw@10.0.0.5:4222' },
      { name: 'mq', kind: 'rabbitmq', url: 'amqps://u:p@mq.example:5671/prod' },
      { name: 'cache', kind: 'redis', url: 'rediss://:pw@[::1]:6380/2' },
      { name: 'q2', kind: 'rabbitmq', url: 'amqp://mq' },
      { name: 'r', kind: 'redis', url: 'redis://cache' },
    ]);
    expect(Object.isFrozen(brokers)).toBe(true);
  });

  it.each([
    ['nats://127.0.0.1:4222', 'entry 1 is not <name>=<url>'],
    ['Events=nats://127.0.0.1:4222', 'entry 1: the name must be 1 to 32 of a-z, 0-9 and -'],
    [`${'a'.repeat(33)}=nats://h`, 'the name must be'],
    ['=nats://h', 'entry 1: the name must be'],
    ['a=nats://h,a=redis://h', '"a" is named twice'],
    ['a=nats://h,b=http://user:hunter2@h', '"b": http:// is not nats://, amqp://, amqps://, redis:// or rediss://'],
    ['a=not a url with hunter2', '"a": not an absolute URL'],
    ['a=redis://', '"a": the URL names no host'],
    [Array.from({ length: 33 }, (_, i) => `b${i}=nats://h`).join(','), 'at most 32 brokers'],
  ])('%s stops the start naming SVC_BROKERS', (value, message) => {
    let err: unknown;
    try {
      loadConfig({ SVC_BROKERS: value });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe('SVC_BROKERS');
    expect((err as Error).message).toContain(message);
    expect((err as Error).message).not.toContain('hunter2');
  });

  it('brokerAddress shows scheme, host and port, never credentials or a path', () => {
    expect(brokerAddress('amqps://user:secret@mq.example:5671/prod')).toBe('amqps://mq.example:5671');
    expect(brokerAddress('nats://token@127.0.0.1:4222')).toBe('nats://127.0.0.1:4222');
    expect(brokerAddress('rediss://:pw@[::1]:6380/2')).toBe('rediss://[::1]:6380');
  });
});
