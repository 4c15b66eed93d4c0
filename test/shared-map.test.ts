// SharedMap (core/shared-map.ts): every version answers as a plain Map given the same changes
// would, whatever versions were made from it since (they share its entries), across the folds of
// its changes into a new base. The lease groups built on it are checked against a fresh grouping
// in lease-groups.test.ts.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { SharedMap } from "../src/core/shared-map.ts";
import { lcg32 as rng } from "./support/rng.ts";

function same(shared: SharedMap<number, { v: number }>, model: Map<number, { v: number }>, at: string): void {
  assert.is(shared.size, model.size, `${at}: size`);
  assert.equal(new Map(shared), model, `${at}: entries`);
  assert.equal(new Set(shared.keys()), new Set(model.keys()), `${at}: keys`);
  assert.is([...shared.values()].length, model.size, `${at}: values`);
  let walked = 0;
  shared.forEach((v, k) => {
    assert.is(model.get(k), v, `${at}: forEach ${String(k)}`);
    walked++;
  });
  assert.is(walked, model.size, `${at}: forEach count`);
  for (let k = 0; k < 60; k++) {
    assert.is(shared.get(k), model.get(k), `${at}: get ${k}`);
    assert.is(shared.has(k), model.has(k), `${at}: has ${k}`);
  }
}

test("every version answers as a Map with the same changes, across branches and folds", () => {
  const r = rng(7);
  for (let round = 0; round < 40; round++) {
    const start = new Map<number, { v: number }>();
    for (let k = 0; k < Math.floor(r() * 50); k++) start.set(Math.floor(r() * 60), { v: k });
    const startCopy = new Map(start);
    // Versions made one from another, each with its model; later steps branch from any earlier one.
    const versions: [SharedMap<number, { v: number }>, Map<number, { v: number }>][] = [[SharedMap.of(start), new Map(start)]];
    for (let step = 0; step < 120; step++) {
      // Mostly on from the newest (long chains: their changes pass the bound and are folded in),
      // now and then from an older one (a branch sharing what the newer ones share).
      const [from, model] = versions[r() < 0.75 ? versions.length - 1 : Math.floor(r() * versions.length)]!;
      const changes = new Map<number, { v: number } | undefined>();
      for (let c = 0; c < 1 + Math.floor(r() * 6); c++) changes.set(Math.floor(r() * 60), r() < 0.4 ? undefined : { v: 1000 + step * 10 + c });
      const next = from.with(changes);
      const nextModel = new Map(model);
      for (const [k, v] of changes) {
        if (v === undefined) nextModel.delete(k);
        else nextModel.set(k, v);
      }
      versions.push([next, nextModel]);
    }
    for (const [i, [shared, model]] of versions.entries()) same(shared, model, `round ${round}, version ${i}`);
    assert.equal(start, startCopy, "the map a first version was made of is never changed");
  }
});

test("no changes: the same version; of() of a shared map: itself", () => {
  const m = SharedMap.of(new Map([[1, { v: 1 }]]));
  assert.is(m.with(new Map()), m);
  assert.is(SharedMap.of(m), m);
  const gone = m.with(new Map([[1, undefined], [2, undefined]]));
  assert.is(gone.size, 0);
  assert.is(gone.get(1), undefined);
  assert.is(m.get(1)?.v, 1, "the version before keeps its entry");
});

test.run();
