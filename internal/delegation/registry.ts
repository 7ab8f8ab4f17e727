import { InternalError } from '../errors.js';

/**
 * The children one agent run started and has not waited for. It holds at every moment: pending +
 * completed = spawned at every moment; pending only shrinks, completed only grows; a result for
 * an unknown or already completed child is refused (an internal error, never counted twice).
 */
export class ChildRegistry<R> {
  private readonly pendingChildren = new Map<string, { task: string }>();
  private readonly completedChildren = new Map<string, { task: string; result: R; read: boolean }>();

  spawn(id: string, task: string): void {
    if (this.pendingChildren.has(id) || this.completedChildren.has(id)) {
      throw new InternalError(`child ${id} was started twice`);
    }
    this.pendingChildren.set(id, { task });
  }

  complete(id: string, result: R): void {
    const child = this.pendingChildren.get(id);
    if (!child) {
      throw new InternalError(
        this.completedChildren.has(id) ? `child ${id} completed twice` : `result for unknown child ${id}`,
      );
    }
    this.pendingChildren.delete(id);
    this.completedChildren.set(id, { task: child.task, result, read: false });
  }

  /** A completed child's result, marked as read; undefined while it runs (or when unknown). */
  read(id: string): R | undefined {
    const child = this.completedChildren.get(id);
    if (child) child.read = true;
    return child?.result;
  }

  has(id: string): boolean {
    return this.pendingChildren.has(id) || this.completedChildren.has(id);
  }

  pending(): { id: string; task: string }[] {
    return [...this.pendingChildren].map(([id, { task }]) => ({ id, task }));
  }

  completed(): { id: string; task: string; result: R; read: boolean }[] {
    return [...this.completedChildren].map(([id, child]) => ({ id, ...child }));
  }

  get spawned(): number {
    return this.pendingChildren.size + this.completedChildren.size;
  }
}
