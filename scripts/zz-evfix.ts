// scratch: write the 1,000-task views fixture into argv[2] and print the env to use.
import { writeViewsFixture, fixtureNow } from "../test/support/views-fixture.ts";
import { spawnSync } from "node:child_process";
const repo = process.argv[2]!;
spawnSync("sh", ["-c", `rm -rf ${repo} && mkdir -p ${repo} && cd ${repo} && git init -q -b main && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m init`]);
const f = { tasks: 1000, agents: 100, events: 100_000, branches: 30 };
writeViewsFixture(repo, f);
console.log(fixtureNow(f));
