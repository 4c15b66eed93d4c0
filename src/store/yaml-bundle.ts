// Its own bundle (dist/yaml-bundle.cjs): the yaml parser is a third of the hook and CLI bundles
// and only a repository with a .handoff.yaml needs it.
export { isNode, LineCounter, parseDocument } from "yaml";
