import { build } from "esbuild";
const r = await build({ entryPoints: ["src/cli/hot-main.ts"], bundle: true, platform: "node", target: "node20", format: "cjs", write: false, metafile: true, minifyWhitespace: true, minifySyntax: true, loader: { ".html": "text" }, define: { PACKAGE_VERSION: '"x"' }, outfile: "/tmp/s37/x.cjs", logLevel: "error" });
const ins = r.metafile.outputs["/tmp/s37/x.cjs"] ? Object.values(r.metafile.outputs)[0].inputs : Object.values(r.metafile.outputs)[0].inputs;
const byPkg = {};
for (const [p, v] of Object.entries(ins)) { const m = p.match(/node_modules\/((@[^/]+\/)?[^/]+)/); const k = m ? m[1] : p.split("/").slice(0, 2).join("/"); byPkg[k] = (byPkg[k] || 0) + v.bytesInOutput; }
console.log(Object.entries(byPkg).sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, v]) => `${(v / 1024).toFixed(0).padStart(6)} KB ${k}`).join("\n"));
const src = Object.entries(ins).filter(([p]) => p.startsWith("src/")).sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput).slice(0, 30);
console.log(src.map(([p, v]) => `${(v.bytesInOutput / 1024).toFixed(1).padStart(6)} KB ${p}`).join("\n"));
