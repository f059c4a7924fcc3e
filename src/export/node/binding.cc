#include <node.h>
#include <uv.h>
#include <v8.h>

#include <assert.h>

namespace {

using v8::Context;
using v8::Function;
using v8::FunctionCallbackInfo;
using v8::Global;
using v8::HandleScope;
using v8::Isolate;
using v8::Local;
using v8::MaybeLocal;
using v8::Number;
using v8::Object;
using v8::Value;

node::async_context ContextOf(const FunctionCallbackInfo<Value>& args) {
  assert(args[0]->IsObject());
  assert(args[1]->IsNumber());
  assert(args[2]->IsNumber());
  return {args[1].As<Number>()->Value(), args[2].As<Number>()->Value()};
}

// callbackScope(resource, asyncId, triggerAsyncId, ...fns): opens one
// node::CallbackScope and calls each function in it, in order, as an addon
// that calls into JavaScript more than once in a scope. The scope's
// TryCatch is verbose: a function that throws has been reported to
// 'uncaughtException' when Call returns, and the next one still runs.
void CallbackScope(const FunctionCallbackInfo<Value>& args) {
  Isolate* isolate = args.GetIsolate();
  node::async_context context = ContextOf(args);
  node::CallbackScope scope(isolate, args[0].As<Object>(), context);
  for (int i = 3; i < args.Length(); i++) {
    assert(args[i]->IsFunction());
    MaybeLocal<Value> ret = args[i].As<Function>()->Call(
        isolate->GetCurrentContext(), args[0], 0, nullptr);
    if (ret.IsEmpty() && isolate->IsExecutionTerminating()) return;
  }
}

// makeCallback(resource, asyncId, triggerAsyncId, fn): node::MakeCallback,
// under a TryCatch of the addon's: an exception thrown by fn ends there, as
// for an addon that catches what its callback throws.
void MakeCallback(const FunctionCallbackInfo<Value>& args) {
  Isolate* isolate = args.GetIsolate();
  node::async_context context = ContextOf(args);
  assert(args[3]->IsFunction());
  v8::TryCatch try_catch(isolate);
  MaybeLocal<Value> ret = node::MakeCallback(
      isolate, args[0].As<Object>(), args[3].As<Function>(), 0, nullptr,
      context);
  if (!ret.IsEmpty()) args.GetReturnValue().Set(ret.ToLocalChecked());
}

// runFromEventLoop(fn): calls fn once from a uv_prepare_t callback, outside
// any callback scope, as a libuv callback runs: after the main script's
// scope has closed and before any immediate or destroy hook.
uv_prepare_t prepare_handle;
Global<Function> callback;
Global<Context> callback_context;

void OnPrepare(uv_prepare_t* handle) {
  uv_prepare_stop(handle);
  uv_close(reinterpret_cast<uv_handle_t*>(handle), nullptr);
  Isolate* isolate = Isolate::GetCurrent();
  HandleScope handle_scope(isolate);
  Local<Context> context = callback_context.Get(isolate);
  Context::Scope context_scope(context);
  Local<Function> fn = callback.Get(isolate);
  callback.Reset();
  callback_context.Reset();
  MaybeLocal<Value> ret = fn->Call(context, v8::Undefined(isolate), 0, nullptr);
  (void)ret;
}

void RunFromEventLoop(const FunctionCallbackInfo<Value>& args) {
  Isolate* isolate = args.GetIsolate();
  assert(args[0]->IsFunction());
  assert(callback.IsEmpty());
  callback.Reset(isolate, args[0].As<Function>());
  callback_context.Reset(isolate, isolate->GetCurrentContext());
  uv_loop_t* loop = node::GetCurrentEventLoop(isolate);
  uv_prepare_init(loop, &prepare_handle);
  uv_prepare_start(&prepare_handle, OnPrepare);
}

void Initialize(Local<Object> exports) {
  NODE_SET_METHOD(exports, "callbackScope", CallbackScope);
  NODE_SET_METHOD(exports, "makeCallback", MakeCallback);
  NODE_SET_METHOD(exports, "runFromEventLoop", RunFromEventLoop);
}

}  // namespace

NODE_MODULE(NODE_GYP_MODULE_NAME, Initialize)
