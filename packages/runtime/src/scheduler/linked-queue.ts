/** A node of a {@link LinkedQueue}; holding it allows O(1) removal. */
export interface QueueNode<T> {
  readonly value: T;
  prev: QueueNode<T> | undefined;
  next: QueueNode<T> | undefined;
  /** False once the node left the queue, so a second removal is a no-op. */
  linked: boolean;
}

/**
 * A FIFO with O(1) enqueue, dequeue and removal of any node — for waiter queues that can be
 * long and whose members leave early (timeouts, cancellation).
 */
export class LinkedQueue<T> {
  private head: QueueNode<T> | undefined;
  private tail: QueueNode<T> | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Appends `value` and returns its node, the handle for {@link remove}. */
  enqueue(value: T): QueueNode<T> {
    const node: QueueNode<T> = { value, prev: undefined, next: undefined, linked: false };
    this.link(node);
    return node;
  }

  /**
   * Appends a node the caller owns — an object that is its own node costs no allocation per
   * entry. Throws if the node is in a queue already.
   */
  link(node: QueueNode<T>): void {
    if (node.linked) throw new RangeError('the node is in a queue already');
    node.prev = this.tail;
    node.next = undefined;
    node.linked = true;
    if (this.tail) this.tail.next = node;
    else this.head = node;
    this.tail = node;
    this.count++;
  }

  /** Removes and returns the oldest value, or `undefined` when empty. */
  dequeue(): T | undefined {
    const node = this.head;
    if (!node) return undefined;
    this.remove(node);
    return node.value;
  }

  peek(): T | undefined {
    return this.head?.value;
  }

  /** Unlinks `node`; returns false when it had already left the queue. */
  remove(node: QueueNode<T>): boolean {
    if (!node.linked) return false;
    if (node.prev) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.tail = node.prev;
    node.prev = node.next = undefined;
    node.linked = false;
    this.count--;
    return true;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let node = this.head; node; node = node.next) yield node.value;
  }
}
