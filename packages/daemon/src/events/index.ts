export * from './errors.js';
export * from './frames.js';
export * from './event-bus.js';
export type { Subscription, SubscriptionEndReason } from './subscription.js';
export { SLOW_CLIENT_WARNING_RATIO, SLOW_CLIENT_REARM_RATIO } from './subscription.js';
