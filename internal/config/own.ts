/** `record[key]` for own keys only: a key such as `constructor` from a user's file never finds Object's. */
export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
