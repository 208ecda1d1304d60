// ioredis, loaded on the first call: a process without REDIS_URL never runs it (about 9 MiB).
// CommonJS on purpose: a plain require() is lazy both when Node runs the sources and in the bundle, where
// esbuild includes ioredis and runs it on this first call. (createRequire(import.meta.url) from an ES
// module hid ioredis from esbuild, so the bundle loaded it from a node_modules beside dist/ at run time.)
module.exports = function loadIoredis() {
  return require('ioredis');
};
