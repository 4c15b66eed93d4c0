// Where git keeps a loose object: its id's first two hex digits name a folder, the rest the file.

/** The path of the loose object `oid` under the git dir `gitDir` (whether or not it is there). */
export function looseObjectPath(gitDir: string, oid: string): string {
  return `${gitDir}/objects/${oid.slice(0, 2)}/${oid.slice(2)}`;
}
