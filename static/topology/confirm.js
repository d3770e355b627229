// A button with data-confirm asks before its form is sent (no inline handlers: the
// Content-Security-Policy allows scripts from our own files only).
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-confirm]");
  if (button && !window.confirm(button.dataset.confirm)) event.preventDefault();
});
