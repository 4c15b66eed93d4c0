import { parseAddress, type Address } from "../../core/address.ts";
import { fail } from "../../core/errors.ts";

/** `--to ADDRESS`, shared by task add and wait: a bad address is refused before anything is written. */
export function addressOption(text: string): Address {
  const parsed = parseAddress(text);
  if (!parsed.ok) fail("invalid_input", parsed.message, { to: text }, [{ action: "fix_input", detail: "e.g. --to codex@pc, --to codex or --to @pc" }]);
  return parsed.address;
}
