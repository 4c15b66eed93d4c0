// The package version, put in by the build (PACKAGE_VERSION); "dev" when run from source.
declare const PACKAGE_VERSION: string;
export const VERSION = typeof PACKAGE_VERSION === "string" ? PACKAGE_VERSION : "dev";
