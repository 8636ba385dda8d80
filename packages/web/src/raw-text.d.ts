/** A file's text, imported with the `?raw` suffix (Vite in tests, build.ts's esbuild plugin for the page). */
declare module '*?raw' {
  const text: string;
  export default text;
}
