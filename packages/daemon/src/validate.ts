// The daemon's checks of configured numbers are the one validation module's (@sluice/protocol):
// each throws a `RangeError` naming the value and the rule it broke (`<name> must be <rule>, got <value>`).
export {
  integerInRange,
  nonNegativeInteger,
  positiveInteger,
  positiveIntegerOrInfinity,
} from '@sluice/protocol';
