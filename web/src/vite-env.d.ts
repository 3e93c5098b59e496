/** Stylesheets are imported for their side effect: Vite extracts them into a file served from /console/assets. */
declare module '*.css';
