// scopecheck conformance addon: the native entry points of Node's
// async-context machinery, exposed to the JS program that a trace becomes.
//
// Built at test time with plain g++ (no node-gyp, no network), against the
// headers of the node binary that will load it, with the C++ standard of
// their common.gypi (gnu++17 for v20, gnu++20 for v26):
//   g++ -shared -fPIC -std=gnu++17 -I/usr/include/node
//       -DNODE_GYP_MODULE_NAME=scopecheck_conform addon.cc -o addon.node
//
// Every function takes its resource as an argument of the JS call, so the
// Local<Object> handed to Node lives in the caller's HandleScope for the whole
// native scope: InternalCallbackScope keeps only a pointer to it, and
// AsyncHooks::native_execution_async_resources_ keeps the Local itself.

#include <node.h>
#include <node_api.h>
#include <uv.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>
#include <unistd.h>

namespace {

using v8::Context;
using v8::Function;
using v8::FunctionCallbackInfo;
using v8::HandleScope;
using v8::Isolate;
using v8::Local;
using v8::MaybeLocal;
using v8::Object;
using v8::TryCatch;
using v8::Value;

// Write one line to fd 1 at once, as the JS side's fs.writeSync does, so that
// the lines keep their order and survive a crash.
void WriteLine(const std::string& line) {
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = write(1, p, left);
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

bool Args(const FunctionCallbackInfo<Value>& args, node::async_context* ac) {
  Isolate* isolate = args.GetIsolate();
  if (args.Length() < 4 || !args[0]->IsNumber() || !args[1]->IsNumber() ||
      !args[2]->IsObject() || !args[3]->IsFunction()) {
    isolate->ThrowException(v8::Exception::TypeError(
        v8::String::NewFromUtf8Literal(
            isolate, "expected (asyncId, triggerAsyncId, resource, fn, ...)")));
    return false;
  }
  Local<Context> context = isolate->GetCurrentContext();
  ac->async_id = args[0]->NumberValue(context).FromMaybe(0);
  ac->trigger_async_id = args[1]->NumberValue(context).FromMaybe(0);
  return true;
}

// Call fn inside an open node::CallbackScope, as an addon that goes on
// calling into JS after a callback threw: the scope's TryCatch is verbose,
// so an exception thrown by fn has gone to the uncaught-exception handler
// when fn->Call returns empty; if it was handled, the addon calls fn again
// (the program's frame() goes on with the trace's next op, in the same
// scope, now failed: ~CallbackScope sees try_catch_.HasCaught() and marks it
// so). An unhandled exception ends the process inside the handler.
void CallUntilDone(Isolate* isolate, Local<Context> context, Local<Function> fn) {
  MaybeLocal<Value> ret = fn->Call(context, v8::Undefined(isolate), 0, nullptr);
  while (ret.IsEmpty() && !isolate->IsExecutionTerminating()) {
    ret = fn->Call(context, v8::Undefined(isolate), 0, nullptr);
  }
}

// callbackScope(asyncId, triggerAsyncId, resource, fn):
// node::CallbackScope(isolate, resource, {asyncId, triggerAsyncId}) around
// calls of fn (CallUntilDone); fn writes the marker of the trace's `close`
// before it returns, and then the scope closes: what the close shows
// follows the marker.
void CallbackScopeFn(const FunctionCallbackInfo<Value>& args) {
  node::async_context ac;
  if (!Args(args, &ac)) return;
  Isolate* isolate = args.GetIsolate();
  HandleScope handle_scope(isolate);
  Local<Context> context = isolate->GetCurrentContext();
  Local<Object> resource = args[2].As<Object>();
  Local<Function> fn = args[3].As<Function>();
  node::CallbackScope scope(isolate, resource, ac);
  CallUntilDone(isolate, context, fn);
}

// The TryCatches of the open makeCallback calls, innermost last.
std::vector<TryCatch*> make_callback_catches;

// node::MakeCallback(isolate, resource, fn, 0, nullptr, {asyncId,
// triggerAsyncId}) with the arguments (asyncId, triggerAsyncId, resource,
// fn); with `catches`, under a TryCatch of the addon's own.
void CallMakeCallback(const FunctionCallbackInfo<Value>& args, bool catches) {
  node::async_context ac;
  if (!Args(args, &ac)) return;
  Isolate* isolate = args.GetIsolate();
  HandleScope handle_scope(isolate);
  Local<Object> resource = args[2].As<Object>();
  Local<Function> fn = args[3].As<Function>();
  if (!catches) {
    (void)node::MakeCallback(isolate, resource, fn, 0, nullptr, ac);
    return;
  }
  TryCatch try_catch(isolate);
  make_callback_catches.push_back(&try_catch);
  (void)node::MakeCallback(isolate, resource, fn, 0, nullptr, ac);
  make_callback_catches.pop_back();
}

// makeCallback(asyncId, triggerAsyncId, resource, fn): node::MakeCallback
// under a TryCatch of the addon's own, which swallows an exception thrown
// by fn silently, as a JS caller's try/catch would, unless reportUncaught()
// made it verbose first.
void MakeCallbackFn(const FunctionCallbackInfo<Value>& args) {
  CallMakeCallback(args, true);
}

// bareMakeCallback(asyncId, triggerAsyncId, resource, fn): the same
// node::MakeCallback with no TryCatch of the addon's (a trace's
// `make-callback ... bare`): what fn throws goes on to the JS caller.
void BareMakeCallbackFn(const FunctionCallbackInfo<Value>& args) {
  CallMakeCallback(args, false);
}

// reportUncaught(): the innermost makeCallback's TryCatch becomes verbose,
// so that the exception fn is about to throw is reported to the
// uncaught-exception handler while the MakeCallback scope is still open (as
// for a MakeCallback from the event loop, where no JS frame catches it).
// V8 reads the flag when the exception reaches the TryCatch.
void ReportUncaughtFn(const FunctionCallbackInfo<Value>& args) {
  if (!make_callback_catches.empty()) make_callback_catches.back()->SetVerbose(true);
}

// Resources held as v8::Global<Object> (a trace's `callback-scope ... global
// Rn` and `reset-global Rn`): one Global per resource number, made on first
// use and never freed (a Global destroyed after the isolate would crash the
// exit). `reset-global` on a number not seen yet makes an empty one, so that
// a later scope holds a Global that is already empty, as in the model.
std::map<double, v8::Global<Object>*> globals;

v8::Global<Object>* GlobalFor(Isolate* isolate, double key, Local<Object> resource) {
  auto it = globals.find(key);
  if (it != globals.end()) return it->second;
  auto* g = new v8::Global<Object>();
  if (!resource.IsEmpty()) g->Reset(isolate, resource);
  globals[key] = g;
  return g;
}

// node::CallbackScope(Environment*, Global<Object>*, async_context) is in
// Node 26's public node.h, not in v20's. Detected from the class itself, so
// that the addon compiles against either header set; the JS side reads
// hasGlobalCallbackScope.
template <typename Scope>
constexpr bool kHasGlobalScope =
    std::is_constructible_v<Scope, node::Environment*, v8::Global<Object>*,
                            node::async_context>;

template <typename Scope>
void RunGlobalScope(Isolate* isolate, v8::Global<Object>* holder,
                    node::async_context ac, Local<Function> fn) {
  if constexpr (kHasGlobalScope<Scope>) {
    Local<Context> context = isolate->GetCurrentContext();
    node::Environment* env = node::GetCurrentEnvironment(context);
    Scope scope(env, holder, ac);
    CallUntilDone(isolate, context, fn);
  } else {
    isolate->ThrowException(v8::Exception::Error(v8::String::NewFromUtf8Literal(
        isolate,
        "this node's public node::CallbackScope has no Global<Object>* constructor")));
  }
}

// globalCallbackScope(asyncId, triggerAsyncId, resource, fn, key): as
// callbackScope, with the resource held as the Global of resource number
// `key` (made from `resource` on first use).
void GlobalCallbackScopeFn(const FunctionCallbackInfo<Value>& args) {
  node::async_context ac;
  if (!Args(args, &ac)) return;
  Isolate* isolate = args.GetIsolate();
  HandleScope handle_scope(isolate);
  Local<Context> context = isolate->GetCurrentContext();
  if (!args[4]->IsNumber()) {
    isolate->ThrowException(v8::Exception::TypeError(v8::String::NewFromUtf8Literal(
        isolate, "expected (asyncId, triggerAsyncId, resource, fn, key)")));
    return;
  }
  double key = args[4]->NumberValue(context).FromMaybe(0);
  v8::Global<Object>* holder = GlobalFor(isolate, key, args[2].As<Object>());
  RunGlobalScope<node::CallbackScope>(isolate, holder, ac, args[3].As<Function>());
}

// resetGlobal(key): Global<Object>::Reset() on the Global of resource number
// `key` (made empty if there is none yet).
void ResetGlobalFn(const FunctionCallbackInfo<Value>& args) {
  Isolate* isolate = args.GetIsolate();
  if (args.Length() < 1 || !args[0]->IsNumber()) {
    isolate->ThrowException(v8::Exception::TypeError(
        v8::String::NewFromUtf8Literal(isolate, "expected (key)")));
    return;
  }
  double key = args[0]->NumberValue(isolate->GetCurrentContext()).FromMaybe(0);
  GlobalFor(isolate, key, Local<Object>())->Reset();
}

// loopMarker(): from the first prepare phase of the event loop, i.e. once the
// main script's scope has closed (its ticks included) and before any
// immediate or destroy hook runs: call the function given to afterMain(), if
// any (the trace's ops after the end of the main script: JS called from the
// event loop outside any scope, which opens its own native scopes, as a libuv
// callback does), then write `# loop`. Everything after that line is the
// epilogue, which the model does not cover.
uv_prepare_t prepare_handle;
bool prepare_started = false;
v8::Global<Function> after_main;
v8::Global<Context> after_main_context;
Isolate* after_main_isolate = nullptr;

void OnPrepare(uv_prepare_t* handle) {
  uv_prepare_stop(handle);
  uv_close(reinterpret_cast<uv_handle_t*>(handle), nullptr);
  if (!after_main.IsEmpty() && after_main_isolate != nullptr) {
    Isolate* isolate = after_main_isolate;
    HandleScope handle_scope(isolate);
    Local<Context> context = after_main_context.Get(isolate);
    Context::Scope context_scope(context);
    Local<Function> fn = after_main.Get(isolate);
    after_main.Reset();
    after_main_context.Reset();
    TryCatch try_catch(isolate);
    MaybeLocal<Value> ret = fn->Call(context, v8::Undefined(isolate), 0, nullptr);
    if (ret.IsEmpty()) WriteLine("# the event-loop callback threw\n");
  }
  WriteLine("# loop\n");
}

void LoopMarker(const FunctionCallbackInfo<Value>& args) {
  if (prepare_started) return;
  uv_loop_t* loop = node::GetCurrentEventLoop(args.GetIsolate());
  if (loop == nullptr) return;
  prepare_started = true;
  uv_prepare_init(loop, &prepare_handle);
  uv_prepare_start(&prepare_handle, OnPrepare);
}

// afterMain(fn): fn runs from the event loop once the main script is over
// (see loopMarker).
void AfterMain(const FunctionCallbackInfo<Value>& args) {
  if (args.Length() < 1 || !args[0]->IsFunction()) return;
  Isolate* isolate = args.GetIsolate();
  after_main_isolate = isolate;
  after_main.Reset(isolate, args[0].As<Function>());
  after_main_context.Reset(isolate, isolate->GetCurrentContext());
}

// N-API callback scopes (`close-outer`), with the napi_env and the async
// contexts of the Node-API module (napi.cc), which explains why the scopes
// are opened and closed here. Open scopes by key (the index of the trace op
// that opened them).
std::map<double, napi_callback_scope> napi_scopes;

// napi.cc hands out its pointers as numbers.
void* PointerArg(const FunctionCallbackInfo<Value>& args, int i) {
  double d = args[i]->NumberValue(args.GetIsolate()->GetCurrentContext()).FromMaybe(0);
  return reinterpret_cast<void*>(static_cast<uintptr_t>(d));
}

bool NapiArgs(const FunctionCallbackInfo<Value>& args, int n, napi_env* env) {
  Isolate* isolate = args.GetIsolate();
  for (int i = 0; i < n; i++) {
    if (args.Length() <= i || !args[i]->IsNumber()) {
      isolate->ThrowException(v8::Exception::TypeError(v8::String::NewFromUtf8Literal(
          isolate, "napiScope(env, context, key, fn) / napiClose(env, key)")));
      return false;
    }
  }
  *env = static_cast<napi_env>(PointerArg(args, 0));
  return true;
}

// napiScope(env, context, key, fn): napi_open_callback_scope on the context
// (its resource argument is ignored by Node), then fn, called as
// callbackScope calls it (CallUntilDone: v8's Function::Call, so that the
// scope's own verbose TryCatch sees an exception, as for node::CallbackScope;
// napi_call_function would add a TryCatch of its own). The trace closes the
// scope out of order (napiClose from inside fn); if fn returns with it still
// open, it is closed here.
void NapiScopeFn(const FunctionCallbackInfo<Value>& args) {
  napi_env env;
  if (!NapiArgs(args, 3, &env) || args.Length() < 4 || !args[3]->IsFunction()) return;
  Isolate* isolate = args.GetIsolate();
  HandleScope handle_scope(isolate);
  Local<Context> context = isolate->GetCurrentContext();
  auto async_context = static_cast<napi_async_context>(PointerArg(args, 1));
  double key = args[2]->NumberValue(context).FromMaybe(0);
  napi_callback_scope scope;
  if (napi_open_callback_scope(env, nullptr, async_context, &scope) != napi_ok) {
    isolate->ThrowException(v8::Exception::Error(
        v8::String::NewFromUtf8Literal(isolate, "napi_open_callback_scope failed")));
    return;
  }
  napi_scopes[key] = scope;
  CallUntilDone(isolate, context, args[3].As<Function>());
  auto it = napi_scopes.find(key);
  if (it != napi_scopes.end()) {
    napi_scopes.erase(it);
    napi_close_callback_scope(env, scope);
  }
}

// napiClose(env, key): napi_close_callback_scope on the scope napiScope
// opened with this key, whichever scopes are open inside it.
void NapiCloseFn(const FunctionCallbackInfo<Value>& args) {
  napi_env env;
  if (!NapiArgs(args, 2, &env)) return;
  Isolate* isolate = args.GetIsolate();
  double key = args[1]->NumberValue(isolate->GetCurrentContext()).FromMaybe(0);
  auto it = napi_scopes.find(key);
  if (it == napi_scopes.end()) {
    isolate->ThrowException(v8::Exception::Error(
        v8::String::NewFromUtf8Literal(isolate, "napiClose: no open scope with this key")));
    return;
  }
  napi_callback_scope scope = it->second;
  napi_scopes.erase(it);
  if (napi_close_callback_scope(env, scope) != napi_ok) {
    isolate->ThrowException(v8::Exception::Error(
        v8::String::NewFromUtf8Literal(isolate, "napi_close_callback_scope failed")));
  }
}

// runTimers(due): run Environment::RunTimers now, synchronously, from the
// JS that called this (at callback-scope depth 0: the program's event-loop
// callback). The program has just called the timers binding's
// scheduleTimer(due), i.e. Environment::ScheduleTimer: uv_timer_start of the
// environment's timer handle with RunTimers as its callback and `due` ms to
// go. The handle is found by that due time among the loop's active timers
// (exactly one must match), stopped, and its callback called as libuv's
// uv__run_timers would: RunTimers opens its InternalCallbackScope(env,
// process, {0, 0}) and calls the environment's timers callback (the
// program's) in its verbose TryCatch loop. Throws if no single timer matches.
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

void RunTimersFn(const FunctionCallbackInfo<Value>& args) {
  Isolate* isolate = args.GetIsolate();
  uv_loop_t* loop = node::GetCurrentEventLoop(isolate);
  if (loop == nullptr || args.Length() < 1 || !args[0]->IsNumber()) {
    isolate->ThrowException(v8::Exception::TypeError(
        v8::String::NewFromUtf8Literal(isolate, "expected (due) and an event loop")));
    return;
  }
  TimerSearch search{
      static_cast<uint64_t>(args[0]->NumberValue(isolate->GetCurrentContext()).FromMaybe(0)),
      nullptr, 0};
  uv_walk(loop, FindTimer, &search);
  if (search.matches != 1) {
    char buf[128];
    snprintf(buf, sizeof(buf), "runTimers: %d active timers are due in %llu ms, expected 1",
             search.matches, static_cast<unsigned long long>(search.due));
    isolate->ThrowException(v8::Exception::Error(
        v8::String::NewFromUtf8(isolate, buf).ToLocalChecked()));
    return;
  }
  uv_timer_t* timer = search.found;
  uv_timer_cb cb = timer->timer_cb;
  uv_timer_stop(timer);
  cb(timer);
}

void Init(Local<Object> exports) {
  Isolate* isolate = Isolate::GetCurrent();
  exports
      ->Set(isolate->GetCurrentContext(),
            v8::String::NewFromUtf8Literal(isolate, "hasGlobalCallbackScope"),
            v8::Boolean::New(isolate, kHasGlobalScope<node::CallbackScope>))
      .Check();
  NODE_SET_METHOD(exports, "globalCallbackScope", GlobalCallbackScopeFn);
  NODE_SET_METHOD(exports, "resetGlobal", ResetGlobalFn);
  NODE_SET_METHOD(exports, "callbackScope", CallbackScopeFn);
  NODE_SET_METHOD(exports, "makeCallback", MakeCallbackFn);
  NODE_SET_METHOD(exports, "bareMakeCallback", BareMakeCallbackFn);
  NODE_SET_METHOD(exports, "reportUncaught", ReportUncaughtFn);
  NODE_SET_METHOD(exports, "loopMarker", LoopMarker);
  NODE_SET_METHOD(exports, "afterMain", AfterMain);
  NODE_SET_METHOD(exports, "runTimers", RunTimersFn);
  NODE_SET_METHOD(exports, "napiScope", NapiScopeFn);
  NODE_SET_METHOD(exports, "napiClose", NapiCloseFn);
}

}  // namespace

NODE_MODULE(NODE_GYP_MODULE_NAME, Init)
