#include <node.h>
#include <uv.h>
#include <v8.h>

#include <assert.h>

#include <cstdint>
#include <map>
#include <type_traits>
#include <vector>

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
using v8::String;
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

// Scopes on the heap, by key, as an addon that keeps a scope open across
// calls holds them, and as napi_open_callback_scope allocates its
// node::CallbackScope (src/node_api.cc).
std::map<double, node::CallbackScope*> heap_scopes;

// heapCallbackScope(resource, asyncId, triggerAsyncId, key, ...fns): as
// callbackScope, with the scope made by `new` and kept under key. If the
// functions return with it still there, it is deleted here.
void HeapCallbackScope(const FunctionCallbackInfo<Value>& args) {
  Isolate* isolate = args.GetIsolate();
  node::async_context context = ContextOf(args);
  assert(args[3]->IsNumber());
  double key = args[3].As<Number>()->Value();
  assert(heap_scopes.count(key) == 0);
  heap_scopes[key] =
      new node::CallbackScope(isolate, args[0].As<Object>(), context);
  for (int i = 4; i < args.Length(); i++) {
    assert(args[i]->IsFunction());
    MaybeLocal<Value> ret = args[i].As<Function>()->Call(
        isolate->GetCurrentContext(), args[0], 0, nullptr);
    if (ret.IsEmpty() && isolate->IsExecutionTerminating()) return;
  }
  auto it = heap_scopes.find(key);
  if (it == heap_scopes.end()) return;
  node::CallbackScope* scope = it->second;
  heap_scopes.erase(it);
  delete scope;
}

// deleteCallbackScope(key): `delete` the scope heapCallbackScope made
// under key, whatever scopes are open inside it, as
// napi_close_callback_scope does (it checks only that some scope is open).
// The destructor runs InternalCallbackScope::Close.
void DeleteCallbackScope(const FunctionCallbackInfo<Value>& args) {
  assert(args[0]->IsNumber());
  auto it = heap_scopes.find(args[0].As<Number>()->Value());
  assert(it != heap_scopes.end());
  node::CallbackScope* scope = it->second;
  heap_scopes.erase(it);
  delete scope;
}

// Resources held as Global<Object> (as an fs request holds its resource),
// one per resource number: made on first use and never freed. resetGlobal
// on a number not seen yet makes an empty one.
std::map<double, Global<Object>*> globals;

Global<Object>* GlobalFor(Isolate* isolate, double key,
                          Local<Object> resource) {
  auto it = globals.find(key);
  if (it != globals.end()) return it->second;
  auto* holder = new Global<Object>();
  if (!resource.IsEmpty()) holder->Reset(isolate, resource);
  globals[key] = holder;
  return holder;
}

// node::CallbackScope(Environment*, Global<Object>*, async_context) is in
// Node 26's node.h, not in v20's: detected from the class, so that the
// binding builds against either.
template <typename Scope>
constexpr bool kHasGlobalScope =
    std::is_constructible_v<Scope, node::Environment*, Global<Object>*,
                            node::async_context>;

template <typename Scope>
void RunGlobalScope(const FunctionCallbackInfo<Value>& args,
                    Global<Object>* holder, node::async_context context) {
  Isolate* isolate = args.GetIsolate();
  if constexpr (kHasGlobalScope<Scope>) {
    node::Environment* env =
        node::GetCurrentEnvironment(isolate->GetCurrentContext());
    Scope scope(env, holder, context);
    for (int i = 4; i < args.Length(); i++) {
      assert(args[i]->IsFunction());
      MaybeLocal<Value> ret = args[i].As<Function>()->Call(
          isolate->GetCurrentContext(), args[0], 0, nullptr);
      if (ret.IsEmpty() && isolate->IsExecutionTerminating()) return;
    }
  } else {
    isolate->ThrowException(v8::Exception::Error(String::NewFromUtf8Literal(
        isolate, "node::CallbackScope has no Global<Object>* constructor")));
  }
}

// globalCallbackScope(resource, asyncId, triggerAsyncId, key, ...fns): as
// callbackScope, with the resource held as the Global of resource number
// key (made from resource on first use).
void GlobalCallbackScope(const FunctionCallbackInfo<Value>& args) {
  node::async_context context = ContextOf(args);
  assert(args[3]->IsNumber());
  double key = args[3].As<Number>()->Value();
  Global<Object>* holder =
      GlobalFor(args.GetIsolate(), key, args[0].As<Object>());
  RunGlobalScope<node::CallbackScope>(args, holder, context);
}

// resetGlobal(key): Global<Object>::Reset() on the Global of resource
// number key, while a scope may hold it.
void ResetGlobal(const FunctionCallbackInfo<Value>& args) {
  assert(args[0]->IsNumber());
  GlobalFor(args.GetIsolate(), args[0].As<Number>()->Value(),
            Local<Object>())->Reset();
}

// The TryCatches of the makeCallback calls in progress, innermost last.
std::vector<v8::TryCatch*> make_callback_catches;

// makeCallback(resource, asyncId, triggerAsyncId, fn): node::MakeCallback,
// under a TryCatch of the addon's: an exception thrown by fn ends there, as
// for an addon that catches what its callback throws.
void MakeCallback(const FunctionCallbackInfo<Value>& args) {
  Isolate* isolate = args.GetIsolate();
  node::async_context context = ContextOf(args);
  assert(args[3]->IsFunction());
  v8::TryCatch try_catch(isolate);
  make_callback_catches.push_back(&try_catch);
  MaybeLocal<Value> ret = node::MakeCallback(
      isolate, args[0].As<Object>(), args[3].As<Function>(), 0, nullptr,
      context);
  make_callback_catches.pop_back();
  if (!ret.IsEmpty()) args.GetReturnValue().Set(ret.ToLocalChecked());
}

// bareMakeCallback(resource, asyncId, triggerAsyncId, fn): the same
// node::MakeCallback with no TryCatch of the addon's: what fn throws goes
// on to the JavaScript that called bareMakeCallback.
void BareMakeCallback(const FunctionCallbackInfo<Value>& args) {
  Isolate* isolate = args.GetIsolate();
  node::async_context context = ContextOf(args);
  assert(args[3]->IsFunction());
  MaybeLocal<Value> ret = node::MakeCallback(
      isolate, args[0].As<Object>(), args[3].As<Function>(), 0, nullptr,
      context);
  if (!ret.IsEmpty()) args.GetReturnValue().Set(ret.ToLocalChecked());
}

// reportUncaught(): the innermost makeCallback's TryCatch becomes verbose,
// so that what its fn throws next is reported to the uncaught-exception
// handler while the MakeCallback scope is still open, as for a
// MakeCallback made from the event loop, where no JavaScript frame
// catches it. V8 reads the flag when the exception reaches the TryCatch.
void ReportUncaught(const FunctionCallbackInfo<Value>& args) {
  assert(!make_callback_catches.empty());
  make_callback_catches.back()->SetVerbose(true);
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

// runTimers(due): Environment::RunTimers now, from the JS that calls this,
// as libuv's uv__run_timers would call it: the environment's timer handle
// (the one active timer that internalBinding('timers').scheduleTimer(due)
// started `due` ms from now) is stopped and its callback called. RunTimers
// opens its InternalCallbackScope(env, process, {0, 0}) and calls the
// environment's timers callback in a loop, each call under a verbose
// TryCatch, again after a call that threw (src/env.cc).
struct TimerSearch {
  uint64_t due;
  uv_timer_t* found;
  int matches;
};

void FindTimer(uv_handle_t* handle, void* arg) {
  TimerSearch* search = static_cast<TimerSearch*>(arg);
  if (handle->type != UV_TIMER || !uv_is_active(handle)) return;
  uv_timer_t* timer = reinterpret_cast<uv_timer_t*>(handle);
  if (uv_timer_get_due_in(timer) == search->due) {
    search->found = timer;
    search->matches++;
  }
}

void RunTimers(const FunctionCallbackInfo<Value>& args) {
  assert(args[0]->IsNumber());
  TimerSearch search{
      static_cast<uint64_t>(args[0].As<Number>()->Value()), nullptr, 0};
  uv_walk(node::GetCurrentEventLoop(args.GetIsolate()), FindTimer, &search);
  assert(search.matches == 1);
  uv_timer_t* timer = search.found;
  uv_timer_cb cb = timer->timer_cb;
  uv_timer_stop(timer);
  cb(timer);
}

void Initialize(Local<Object> exports) {
  NODE_SET_METHOD(exports, "callbackScope", CallbackScope);
  NODE_SET_METHOD(exports, "makeCallback", MakeCallback);
  NODE_SET_METHOD(exports, "bareMakeCallback", BareMakeCallback);
  NODE_SET_METHOD(exports, "reportUncaught", ReportUncaught);
  NODE_SET_METHOD(exports, "heapCallbackScope", HeapCallbackScope);
  NODE_SET_METHOD(exports, "deleteCallbackScope", DeleteCallbackScope);
  NODE_SET_METHOD(exports, "globalCallbackScope", GlobalCallbackScope);
  NODE_SET_METHOD(exports, "resetGlobal", ResetGlobal);
  NODE_SET_METHOD(exports, "runFromEventLoop", RunFromEventLoop);
  NODE_SET_METHOD(exports, "runTimers", RunTimers);
}

}  // namespace

NODE_MODULE(NODE_GYP_MODULE_NAME, Initialize)
