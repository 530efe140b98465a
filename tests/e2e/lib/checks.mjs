// Assertions shared by several spec modules.
import { assert, assertEqual } from './harness.mjs';
import { cliHeadlineForText } from './cli.mjs';

export const VERDICT_START = /^Exclusion (holds|broken)/;

/** #verdict is a status region whose text begins with one of the two verdicts. */
export async function checkVerdictRegion(ctx) {
  assertEqual(await ctx.attr('#verdict', 'role'), 'status', '#verdict role');
  const text = await ctx.text('#verdict');
  assert(
    VERDICT_START.test(text),
    `#verdict text should begin "Exclusion holds" or "Exclusion broken" but is ${JSON.stringify(text.slice(0, 120))}`,
  );
  const headline = await ctx.text('#verdict-headline');
  assert(VERDICT_START.test(headline), `#verdict-headline does not begin with a verdict: ${JSON.stringify(headline)}`);
  return headline;
}

/**
 * The strongest check: the CLI run on the app's own scenario text (#editor) with its seed
 * (#seed) prints the same headline as #verdict-headline.
 */
export async function checkHeadlineMatchesEditor(ctx, what) {
  const editor = await ctx.value('#editor');
  const seed = await ctx.value('#seed');
  let expected;
  try {
    expected = cliHeadlineForText(editor, seed);
  } catch (e) {
    throw new Error(`${what}: the CLI rejected the #editor text (seed ${seed}): ${e.message}`);
  }
  const actual = await ctx.text('#verdict-headline');
  assertEqual(actual, expected, `${what}: #verdict-headline vs the CLI on the #editor text with seed ${seed}`);
  return actual;
}

/** The shipped lessons in their compact form, as the page fetches them: the course's index,
 *  then each lesson's file (`course/ID.json`). */
export async function shippedLessons(page) {
  return page.evaluate(async () => {
    const index = await (await fetch('./course/index.json')).json();
    const files = await Promise.all(index.lessons.map((id) => fetch(`./course/${id}.json`).then((r) => r.json())));
    return files.map((f) => f.lesson);
  });
}
