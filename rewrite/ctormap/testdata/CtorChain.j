; Appendix A and Figure 1 of "Portable profiling of memory allocation in Java": A() calls
; this(new Object()), so the first constructor call in A() is Object.<init> on a fresh object,
; not the alternate constructor; A(Object) calls super(). abandon() allocates an object whose
; constructor is never called (Figure 6), which no analysis may pair with a constructor call.
.class public CtorChain
.super java/lang/Object

.method public <init>()V
    .limit stack 3
    .limit locals 1
    aload_0
    new java/lang/Object
    dup
    invokespecial java/lang/Object/<init>()V
    invokespecial CtorChain/<init>(Ljava/lang/Object;)V
    return
.end method

.method public <init>(Ljava/lang/Object;)V
    .limit stack 1
    .limit locals 2
    aload_0
    invokespecial java/lang/Object/<init>()V
    return
.end method

; A constructor with a subroutine (jsr/ret, class file version 45) after super(): the analysis
; must follow the return address and keep `this` initialized through the subroutine.
.method public <init>(I)V
    .limit stack 2
    .limit locals 3
    aload_0
    invokespecial java/lang/Object/<init>()V
    jsr Sub
    return
Sub:
    astore_2
    aload_0
    pop
    ret 2
.end method

.method public static abandon()V
    .limit stack 1
    .limit locals 0
    new CtorChain
    pop
    return
.end method
