import { describe, expect, it } from 'vitest';
import { isLoopbackAddress, isLoopbackHost } from '../../internal/loopback.js';

/** The one loopback check the proxy bypass, url_fetch's test opening and keyless local servers share. */
describe('isLoopbackAddress / isLoopbackHost', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['128.0.0.1', false],
    ['10.0.0.1', false],
    ['::2', false],
    ['::ffff:10.0.0.1', false],
    ['localhost', false],
    ['example.com', false],
    ['', false],
  ])('address %s: %s', (address, expected) => {
    expect(isLoopbackAddress(address)).toBe(expected);
  });

  it('a host is this machine by name (localhost) or by a loopback address', () => {
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('LOCALHOST')).toBe(true);
    expect(isLoopbackHost('[::1]')).toBe(true);
    expect(isLoopbackHost('127.0.0.1')).toBe(true);
    expect(isLoopbackHost('localhost.example.com')).toBe(false);
    expect(isLoopbackHost('192.0.2.1')).toBe(false);
  });
});
