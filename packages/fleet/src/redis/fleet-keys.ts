/**
 * The key prefix of a fleet: `sluice:{<name>}:`. The braces make every key of the fleet one
 * Redis Cluster hash slot, so a script may touch any of them; the scripts derive pool and node
 * keys from the prefixes they are given.
 */
export function fleetPrefix(fleetName: string): string {
  return `sluice:{${fleetName}}:`;
}

/** The key prefix of one pool — one provider/model — of the fleet with prefix `fleet`. */
export function poolPrefix(fleet: string, pool: string): string {
  return `${fleet}pool:${pool}:`;
}
