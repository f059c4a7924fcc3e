// scopecheck bench: the calls Node's benchmark/napi/make_callback times
// (nodejs/node#66511's table), written for scopecheck. `run(n, callback,
// finished, kind)` arms a 0 ms libuv timer; when it fires, with no
// JavaScript on the stack (as an I/O callback runs), it calls `callback` n
// times, each in a HandleScope of its own, the way `kind` says:
//   0  node::MakeCallback(isolate, receiver, callback, 0, nullptr, {0, 0})
//   1  node::AsyncResource::MakeCallback on one resource made by run()
//   2  v8::Function::Call (what a call costs without Node's scope)
// then calls `finished` through node::MakeCallback and closes the timer.
#include <node.h>
#include <uv.h>

#include <cstdint>
#include <memory>

namespace {

struct Batch {
  uv_timer_t timer;
  v8::Isolate* isolate = nullptr;
  int64_t calls = 0;
  int kind = 0;
  v8::Global<v8::Context> context;
  v8::Global<v8::Function> callback;
  v8::Global<v8::Function> finished;
  std::unique_ptr<node::AsyncResource> resource;
};

void Fire(uv_timer_t* timer) {
  Batch* batch = static_cast<Batch*>(timer->data);
  v8::Isolate* isolate = batch->isolate;
  v8::HandleScope outer(isolate);
  v8::Local<v8::Context> context = batch->context.Get(isolate);
  v8::Context::Scope in_context(context);
  v8::Local<v8::Object> receiver = context->Global();
  v8::Local<v8::Function> callback = batch->callback.Get(isolate);
  for (int64_t i = 0; i < batch->calls; i++) {
    v8::HandleScope each(isolate);
    if (batch->kind == 0) {
      (void)node::MakeCallback(isolate, receiver, callback, 0, nullptr, {0, 0});
    } else if (batch->kind == 1) {
      (void)batch->resource->MakeCallback(callback, 0, nullptr);
    } else {
      (void)callback->Call(context, receiver, 0, nullptr);
    }
  }
  v8::Local<v8::Function> finished = batch->finished.Get(isolate);
  (void)node::MakeCallback(isolate, receiver, finished, 0, nullptr, {0, 0});
  uv_close(reinterpret_cast<uv_handle_t*>(&batch->timer), [](uv_handle_t* h) {
    delete static_cast<Batch*>(h->data);
  });
}

void Run(const v8::FunctionCallbackInfo<v8::Value>& args) {
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  Batch* batch = new Batch;
  batch->isolate = isolate;
  batch->calls = args[0]->IntegerValue(context).FromJust();
  batch->context.Reset(isolate, context);
  batch->callback.Reset(isolate, args[1].As<v8::Function>());
  batch->finished.Reset(isolate, args[2].As<v8::Function>());
  batch->kind = args[3]->Int32Value(context).FromJust();
  if (batch->kind == 1) {
    batch->resource = std::make_unique<node::AsyncResource>(
        isolate, v8::Object::New(isolate), "ScopecheckBench");
  }
  batch->timer.data = batch;
  uv_timer_init(node::GetCurrentEventLoop(isolate), &batch->timer);
  uv_timer_start(&batch->timer, Fire, 0, 0);
}

void Init(v8::Local<v8::Object> exports,
          v8::Local<v8::Value> module,
          void* priv) {
  NODE_SET_METHOD(exports, "run", Run);
}

}  // namespace

NODE_MODULE(NODE_GYP_MODULE_NAME, Init)
