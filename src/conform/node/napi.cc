// scopecheck conformance addon, Node-API half: what the program needs to
// open and close N-API callback scopes (napi_open_callback_scope /
// napi_close_callback_scope), for the trace op `close-outer K` (a scope
// closed while K native scopes inside it are still open), and the async
// contexts and napi_make_callback of `napi-async-init R` and
// `napi-make-callback R`.
//
// Node-API needs a napi_env, which only a Node-API module gets, so this is a
// module of its own, built like addon.cc with plain g++ against the binary's
// headers:
//   g++ -shared -fPIC -std=gnu++17 -I/usr/include/node napi.cc -o napi.node
// It makes the async contexts and hands its napi_env to the program; the
// scopes are opened and closed by addon.cc (napiScope, napiClose) with that
// env, from a plain node::-API function: a Node-API function's own
// invocation (napi_env__::CallIntoModule) CHECKs that it returns with as many
// callback scopes open as it started with, which an out-of-order close from
// a later call would fail, though napi_close_callback_scope itself only
// checks that some scope is open.
//
// What Node does (src/node_api.cc): napi_async_init makes a
// v8impl::AsyncContext (its ids from new_async_id() and
// get_default_trigger_async_id(), a Global of the resource, and
// AsyncWrap::EmitAsyncInit); napi_open_callback_scope heap-allocates a
// node::CallbackScope on the resource (a Local made from that Global) and
// the context's ids, and counts it in env->open_callback_scopes;
// napi_close_callback_scope checks only that counter, then `delete`s the
// scope, whose destructor runs InternalCallbackScope::Close whatever scopes
// are open inside it.

#include <node_api.h>

#include <cstdint>

namespace {

napi_value Throw(napi_env env, const char* message) {
  napi_throw_error(env, nullptr, message);
  return nullptr;
}

// A pointer as a JS number, for addon.cc: a napi External would wrap it
// (v8impl's ExternalWrapper), and user-space addresses fit in a double.
napi_value Pointer(napi_env env, void* p) {
  napi_value number;
  napi_create_double(env, static_cast<double>(reinterpret_cast<uintptr_t>(p)), &number);
  return number;
}

// env() -> this module's napi_env, as a number.
napi_value Env(napi_env env, napi_callback_info info) {
  return Pointer(env, env);
}

// asyncInit(resource) -> a napi_async_context (as a number) made by
// napi_async_init on resource. The program sets the id counter, the default
// trigger id, the execution id and kInit around the call (runtime.js,
// napiContext), so that the context gets the trace's ids and no init hook
// runs for it; the contexts are never destroyed (no destroy hook either).
napi_value AsyncInit(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 1) {
    return Throw(env, "asyncInit(resource)");
  }
  napi_value name;
  napi_create_string_utf8(env, "test", NAPI_AUTO_LENGTH, &name);
  napi_async_context context;
  if (napi_async_init(env, argv[0], name, &context) != napi_ok) {
    return Throw(env, "napi_async_init failed");
  }
  return Pointer(env, context);
}

// makeCallback(context, recv, fn): napi_make_callback on the async context
// (a number from asyncInit) with recv as `this`: InternalMakeCallback with
// the context's ids, its resource and (Node 26) the frame it captured. Its
// own TryCatch (NAPI_PREAMBLE) keeps an exception fn throws; the module's
// CallIntoModule throws it again into the JS caller when this returns.
napi_value MakeCallback(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 3) {
    return Throw(env, "makeCallback(context, recv, fn)");
  }
  double address = 0;
  napi_get_value_double(env, argv[0], &address);
  auto context = reinterpret_cast<napi_async_context>(static_cast<uintptr_t>(address));
  napi_value result;
  napi_make_callback(env, context, argv[1], argv[2], 0, nullptr, &result);
  return nullptr;
}

napi_value Init(napi_env env, napi_value exports) {
  const napi_property_descriptor methods[] = {
      {"env", nullptr, Env, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"asyncInit", nullptr, AsyncInit, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"makeCallback", nullptr, MakeCallback, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof(methods) / sizeof(methods[0]), methods);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
