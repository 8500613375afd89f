import type * as z from 'zod/mini';

/** A failed field of a request, as zod reports it: where it is and what kind of failure. */
export type InputIssue = z.core.$ZodIssue;

/**
 * Turns the first issue of a request that failed its schema into the route's typed error (its
 * stable `code`, and a message that quotes the value through `describeValue`). It gets the
 * whole input so that it can quote the offending value itself: zod's issues carry no input.
 */
export type IssueExplainer<I> = (issue: InputIssue, input: I) => Error;

/**
 * Validates `input` with the route's schema and returns what it parsed; on failure throws the
 * error `explain` makes of the first issue. Object schemas list their fields in the order the
 * route checked them by hand, so the first issue names the same field it did.
 */
export function parseInput<S extends z.ZodMiniType, I>(
  schema: S,
  input: I,
  explain: IssueExplainer<I>,
): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw explain(result.error.issues[0]!, input);
}

/** The first segment of an issue's path: the body field (or query parameter) it is about. */
export function fieldOf(issue: InputIssue): PropertyKey | undefined {
  return issue.path[0];
}
