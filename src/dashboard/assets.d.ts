// The page is bundled as text (esbuild --loader:.html=text) and served from memory.
declare module "*.html" {
  const text: string;
  export default text;
}
