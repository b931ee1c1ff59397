import { CounterRng, keyedSeed } from './random';

/** Seed of the built-in corpus: fixed, so every demo run sees the same stories. */
const STORIES_SEED = 2024;
/** Size of the built-in corpus in characters (about 300 KB). */
export const STORIES_CHARS = 300_000;

interface Hero {
  readonly name: string;
  readonly kind: string;
  /** he / she */
  readonly subject: string;
  /** his / her */
  readonly possessive: string;
}

const GIRLS = ['Lily', 'Mia', 'Anna', 'Sue', 'Zoe', 'Rosa', 'Emma', 'Lucy', 'Ella', 'Nora', 'Ivy', 'Ruby'];
const BOYS = ['Tom', 'Max', 'Ben', 'Sam', 'Leo', 'Tim', 'Jack', 'Finn', 'Oscar', 'Hugo', 'Eli', 'Noah'];
const GIRL_KINDS = ['little girl', 'small cat', 'brave mouse', 'young fox', 'happy duck', 'tiny rabbit'];
const BOY_KINDS = ['little boy', 'small dog', 'old bear', 'curious bird', 'green frog', 'slow turtle'];
const PLACES = [
  'a small house near the woods',
  'a big farm with a red barn',
  'a quiet town by the sea',
  'a green valley between two hills',
  'a tall tree in the park',
  'a busy street in the city',
  'a warm hole under the garden',
  'a little boat on the river',
];
const LOVES = [
  'play in the sun',
  'sing songs',
  'run and jump',
  'look at the stars',
  'help mom in the kitchen',
  'read big books',
  'build things with sticks',
  'dance in the rain',
];
const THINGS = [
  ['ball', 'red'],
  ['stone', 'shiny'],
  ['kite', 'blue'],
  ['map', 'old'],
  ['key', 'golden'],
  ['box', 'big'],
  ['hat', 'soft'],
  ['shell', 'pink'],
  ['drum', 'loud'],
  ['flower', 'yellow'],
] as const;
const FOUND_AT = [
  'under a bush',
  'in the sand',
  'next to the old well',
  'on the path to school',
  'behind the door',
  'at the top of the hill',
];
const TIMES = ['morning', 'sunny day', 'rainy afternoon', 'cold night', 'windy day', 'warm evening'];
const GOOD_FEELINGS = ['happy', 'proud', 'glad', 'excited'];
const BAD_FEELINGS = ['sad', 'scared', 'worried', 'upset'];
const PROBLEMS = [
  (t: string) => `the wind took the ${t} high into the sky`,
  (t: string) => `the ${t} fell into the river`,
  (t: string) => `a big dog ran away with the ${t}`,
  (t: string) => `the ${t} got stuck in a tall tree`,
  (t: string) => `the ${t} rolled down the hill and was lost`,
];
const FIXES = [
  (t: string) => `used a long stick to get the ${t} back`,
  (t: string) => `asked a kind bird to bring the ${t} down`,
  (t: string) => `looked everywhere until they found the ${t}`,
  (t: string) => `built a little bridge and saved the ${t}`,
  (t: string) => `climbed up slowly and took the ${t}`,
];
const MORALS = [
  'it is good to share',
  'friends help each other',
  'being brave is important',
  'you should always be kind',
  'it is fine to ask for help',
  'good things take time',
];
const SAYINGS = [
  'Look at this!',
  'What a nice day!',
  'Can you help me?',
  'I am not afraid!',
  'Let us go together!',
  'Thank you, my friend!',
];

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function article(word: string): string {
  return /^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`;
}

function makeHero(rng: CounterRng, avoid?: string): Hero {
  const girl = rng.chance(0.5);
  const names = (girl ? GIRLS : BOYS).filter((n) => n !== avoid);
  return {
    name: rng.pick(names),
    kind: rng.pick(girl ? GIRL_KINDS : BOY_KINDS),
    subject: girl ? 'she' : 'he',
    possessive: girl ? 'her' : 'his',
  };
}

/** One short story: a hero, a found thing, a friend, a problem, a fix and a moral. */
function story(rng: CounterRng): string {
  const hero = makeHero(rng);
  const friend = makeHero(rng, hero.name);
  const [thing, colour] = rng.pick(THINGS);
  const thingText = `${colour} ${thing}`;
  const He = capitalize(hero.subject);
  const s: string[] = [];
  s.push(
    rng.pick([
      `Once upon a time, there was ${article(hero.kind)} named ${hero.name}.`,
      `Once upon a time, ${article(hero.kind)} called ${hero.name} lived in ${rng.pick(PLACES)}.`,
      `There once was ${article(hero.kind)} named ${hero.name}.`,
    ]),
  );
  s.push(
    rng.pick([
      `${He} loved to ${rng.pick(LOVES)}.`,
      `Every day, ${hero.name} liked to ${rng.pick(LOVES)}.`,
      `${He} lived in ${rng.pick(PLACES)} and loved to ${rng.pick(LOVES)}.`,
    ]),
  );
  s.push(`One ${rng.pick(TIMES)}, ${hero.name} found ${article(thingText)} ${rng.pick(FOUND_AT)}.`);
  s.push(
    rng.pick([
      `${He} was very ${rng.pick(GOOD_FEELINGS)}.`,
      `"${rng.pick(SAYINGS)}" said ${hero.name}.`,
      `${He} smiled and held the ${thing} close.`,
    ]),
  );
  s.push(
    rng.pick([
      `${hero.name} ran to show it to ${hero.possessive} friend ${friend.name}, ${article(friend.kind)}.`,
      `Then ${hero.name} met ${friend.name}, ${article(friend.kind)} from ${rng.pick(PLACES)}.`,
    ]),
  );
  s.push(`"Can we play with the ${thing}?" asked ${friend.name}. "Yes!" said ${hero.name}.`);
  const problem = rng.pick(PROBLEMS)(thing);
  s.push(`But then ${problem}.`);
  s.push(`${hero.name} felt ${rng.pick(BAD_FEELINGS)}.`);
  if (rng.chance(0.5)) s.push(`"Do not cry," said ${friend.name}. "I have an idea."`);
  s.push(`Together, ${hero.name} and ${friend.name} ${rng.pick(FIXES)(thing)}.`);
  s.push(`In the end, they were ${rng.pick(GOOD_FEELINGS)} and played until the sun went down.`);
  s.push(`${hero.name} learned that ${rng.pick(MORALS)}.`);
  return s.join(' ');
}

/**
 * A corpus of simple short stories written from templates with a seeded generator: the same
 * seed and size always give the same text, so the demo needs no download.
 */
export function generateStories(seed = STORIES_SEED, chars = STORIES_CHARS): string {
  const rng = new CounterRng(keyedSeed(seed, 'stories', 0));
  const stories: string[] = [];
  let length = 0;
  while (length < chars) {
    const text = story(rng);
    stories.push(text);
    length += text.length + 2;
  }
  return `${stories.join('\n\n')}\n`;
}
