// The Node-API half of the addon: an N-API async context made on a
// resource and napi_make_callback on it (src/node_api.cc,
// v8impl::AsyncContext). The context takes newAsyncId() and the current
// execution id as its trigger, and emits init with the name given here; on
// Node 26 it also keeps the AsyncContextFrame current when it is made, which
// its MakeCallback enters around the callback.
#include <assert.h>
#include <node_api.h>
#include <stddef.h>

#define CALL(call)                                                           \
  do {                                                                       \
    napi_status status = (call);                                             \
    assert(status == napi_ok);                                               \
    (void)status;                                                            \
  } while (0)

// asyncInit(resource): napi_async_init on resource, the context kept on the
// resource (napi_wrap) for makeCallback. Never destroyed: no destroy hook.
static napi_value AsyncInit(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value resource;
  CALL(napi_get_cb_info(env, info, &argc, &resource, NULL, NULL));
  assert(argc == 1);
  napi_value name;
  CALL(napi_create_string_utf8(env, "test", NAPI_AUTO_LENGTH, &name));
  napi_async_context context;
  CALL(napi_async_init(env, resource, name, &context));
  void* earlier;
  if (napi_remove_wrap(env, resource, &earlier) != napi_ok) earlier = NULL;
  CALL(napi_wrap(env, resource, context, NULL, NULL, NULL));
  return NULL;
}

// makeCallback(resource, fn): napi_make_callback on the context asyncInit
// kept on resource, with resource as `this`; returns what fn returns. An
// exception fn throws ends here, as for a module that catches what its
// callback throws (napi_get_and_clear_last_exception).
static napi_value MakeCallback(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CALL(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  assert(argc == 2);
  void* context;
  CALL(napi_unwrap(env, argv[0], &context));
  napi_value result;
  if (napi_make_callback(env, (napi_async_context)context, argv[0], argv[1],
                         0, NULL, &result) != napi_ok) {
    napi_value exception;
    CALL(napi_get_and_clear_last_exception(env, &exception));
    return NULL;
  }
  return result;
}

static napi_value Init(napi_env env, napi_value exports) {
  napi_property_descriptor methods[] = {
      {"asyncInit", NULL, AsyncInit, NULL, NULL, NULL, napi_default, NULL},
      {"makeCallback", NULL, MakeCallback, NULL, NULL, NULL, napi_default,
       NULL},
  };
  CALL(napi_define_properties(env, exports,
                              sizeof(methods) / sizeof(methods[0]), methods));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
