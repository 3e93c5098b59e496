import { INVISIBLE, INVISIBLE_FORMATTING } from '../../src/commands/invisibleCharacters';

// A label refuses the invisible formatting characters; text that must say something counts them as nothing too.
test('every invisible formatting character a label refuses is among the invisible characters', () => {
  const formatting = new RegExp(`[${INVISIBLE_FORMATTING}]`);
  const invisible = new RegExp(`^[${INVISIBLE}]$`);
  for (let code = 0; code <= 0xffff; code++) {
    const character = String.fromCharCode(code);
    if (formatting.test(character)) expect([code.toString(16), invisible.test(character)]).toEqual([code.toString(16), true]);
  }
});
