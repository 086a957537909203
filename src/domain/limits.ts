/** Bounds of plan values, shared by the config schema, the API schemas, the stores and the CLI. */

/** Largest credit balance (and largest single top-up); JSON numbers stay exact far beyond it. */
export const MAX_CREDITS = 1_000_000_000_000;

/** Longest premium grant, in days (100 years): past it dates stop being meaningful. */
export const MAX_PREMIUM_DAYS = 36_500;
