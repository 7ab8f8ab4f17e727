/**
 * Lines released in input order: the line of item `n` goes out once items 0 … n−1 have gone out.
 * Only finished items that wait for an earlier one are held.
 */
export class OrderedOutput<T> {
  private next = 0;
  private readonly held = new Map<number, T>();

  constructor(private readonly write: (value: T) => void) {}

  put(index: number, value: T): void {
    if (index !== this.next) {
      this.held.set(index, value);
      return;
    }
    this.write(value);
    this.next++;
    for (let waiting = this.held.get(this.next); waiting !== undefined; waiting = this.held.get(this.next)) {
      this.held.delete(this.next);
      this.write(waiting);
      this.next++;
    }
  }

  /** Items put so far that still wait for an earlier one. */
  get waiting(): number {
    return this.held.size;
  }
}
