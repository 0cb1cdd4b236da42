// Asking for the server's bearer token when the API answers 401 (see api.js).

/** Shows the token dialog; resolves to the token typed, or null when the user cancels. */
export function askForToken(rejected) {
  const dialog = document.getElementById("token-dialog");
  const input = document.getElementById("token-input");
  document.getElementById("token-rejected").hidden = !rejected;
  input.value = "";
  dialog.returnValue = "";
  dialog.showModal();
  input.focus();
  return new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => resolve(dialog.returnValue === "connect" && input.value.trim() ? input.value.trim() : null),
      { once: true },
    );
  });
}
